import { useAppSuite } from '../../utils/app-suite';
import { createSteps, executeAsync, listRuns } from '../../utils/workflow-api';
import { GateStep, GateStepModule } from '../../utils/workflow-gate-step';
import { untilTrue } from '../../utils/until';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const until = (what: string, check: () => boolean | Promise<boolean>, timeoutMs = 15_000) =>
  untilTrue(check, what, { timeoutMs, everyMs: 25 });

/** One user cannot fill the queue for everyone: a per-user bound, and claims fair between users. */
describe('workflow queue: per-user bound and fair claims', () => {
  let workflowId: string;
  const opened = new Set<string>();
  const s = useAppSuite({
    env: { WORKFLOW_POLL_MS: '50', WORKFLOW_WORKERS: '2', WORKFLOW_MAX_QUEUED_PER_USER: '5' },
    modules: [GateStepModule],
    users: 2,
    forms: 1,
  });
  beforeEach(async () => {
    workflowId = await createSteps(s.t, s.admin, [
      { name: 'wait', type: 'gate', config: { gate: '{{input.gate}}' } },
    ]);
  });
  afterEach(async () => {
    // Lets every run still waiting at a gate finish, so no worker stays busy into the next test.
    const runs = async () => (await listRuns(s.t, s.admin, workflowId)).data;
    await until('every run to finish', async () => {
      for (const gate of opened) GateStep.open(gate);
      return (await runs()).every((run: any) => !['queued', 'running'].includes(run.status));
    });
    opened.clear();
  });

  const queue = (who: 'alice' | 'bob', gate: string) => {
    opened.add(gate);
    const user = who === 'alice' ? s.users[0] : s.users[1];
    return executeAsync(s.t, user.token, workflowId, s.configId, { gate });
  };

  it('a user over WORKFLOW_MAX_QUEUED_PER_USER queued or running runs gets 429 WORKFLOW_QUEUE_FULL; others are not affected', async () => {
    for (let i = 1; i <= 5; i++) expect((await queue('alice', `bound-a${i}`)).statusCode).toBe(202);
    const refused = await queue('alice', 'bound-a6');
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBe('5');
    expect(refused.json()).toMatchObject({
      success: false,
      code: 'WORKFLOW_QUEUE_FULL',
      statusCode: 429,
      details: { maxQueuedPerUser: 5 },
    });
    expect((await queue('bob', 'bound-b1')).statusCode).toBe(202);
    // A finished run frees a place.
    await until(
      'a run of alice at its gate',
      () => GateStep.isWaiting('bound-a1') || GateStep.isWaiting('bound-a2'),
    );
    const first = GateStep.isWaiting('bound-a1') ? 'bound-a1' : 'bound-a2';
    GateStep.open(first);
    await until('a place for alice', async () => (await queue('alice', 'bound-a7')).statusCode === 202);
  });

  it("another user's run is claimed before the backlog of a user who filled the workers", async () => {
    for (let i = 1; i <= 4; i++) expect((await queue('alice', `fair-a${i}`)).statusCode).toBe(202);
    await until(
      'both workers busy with alice',
      () => GateStep.isWaiting('fair-a1') && GateStep.isWaiting('fair-a2'),
    );
    expect((await queue('bob', 'fair-b1')).statusCode).toBe(202);
    await sleep(200);
    expect(GateStep.isWaiting('fair-b1')).toBe(false);
    GateStep.open('fair-a1');
    await until(
      'the freed worker to take a run',
      () => GateStep.isWaiting('fair-b1') || GateStep.isWaiting('fair-a3'),
    );
    expect(GateStep.isWaiting('fair-b1')).toBe(true);
    expect(GateStep.isWaiting('fair-a3')).toBe(false);
  });
});
