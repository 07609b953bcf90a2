import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { rowsOf } from '../../../src/database/raw-rows';
import { WorkflowRunRetention } from '../../../src/workflow/engine/queue/workflow-run-retention';
import { WorkflowEffectsRepository } from '../../../src/workflow/effects/workflow-effects.repository';
import type { NewRun } from '../../../src/workflow/engine/model/run-records';
import { RunJournalRepository } from '../../../src/workflow/engine/journal/run-journal.repository';
import { RunQueueRepository } from '../../../src/workflow/engine/queue/run-queue.repository';
import { RunHistoryRepository } from '../../../src/workflow/runs/run-history.repository';
import { createConfig } from '../../factories/config.factory';
import { adminToken } from '../../factories/user.factory';
import { createTestApp, type TestApp } from '../../utils/test-app';
import { createSteps } from '../../utils/workflow-api';

/** The statements that write a run, on the real database (PGlite, or PostgreSQL with TEST_DATABASE_URL). */
describe('run repositories (journal, queue, history)', () => {
  let t: TestApp;
  let journal: RunJournalRepository;
  let queue: RunQueueRepository;
  let history: RunHistoryRepository;
  let admin: string;
  let configId: string;
  let workflowId: string;
  beforeAll(async () => {
    // The app's own outbox sender would claim the effects these tests claim by hand, and its queue
    // workers the runs these tests queue (a claim between two statements here once failed a test).
    t = await createTestApp({ env: { OUTBOX_POLL_MS: '600000', WORKFLOW_WORKERS: '0' } });
    journal = t.app.get(RunJournalRepository);
    queue = t.app.get(RunQueueRepository);
    history = t.app.get(RunHistoryRepository);
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await t.reset();
    admin = await adminToken(t);
    configId = await createConfig(t, admin);
    workflowId = await createSteps(t, admin, [{ name: 'store', type: 'save' }]);
  });

  const newRun = (): NewRun => ({
    id: randomUUID(),
    workflowId,
    userId: null,
    siteId: null,
    configId,
    request: { configId },
    startedAt: new Date(),
    definition: { steps: [] },
    definitionVersion: 1,
    rerunOf: null,
  });
  const outcome = (dataId: string | null) => ({
    status: 'success' as const,
    message: 'Workflow completed',
    steps: [{ name: 'store', type: 'save', status: 'success' }],
    dataId,
    durationMs: 5,
    checkpoint: {},
  });
  const logOf = async (dataId: string) =>
    (await t.request({ method: 'GET', url: `/api/data/${configId}/${dataId}`, token: admin })).json()
      .workflow;

  async function saveRecord(): Promise<string> {
    const response = await t.request({
      method: 'POST',
      url: `/api/data/${configId}`,
      token: admin,
      payload: { name: 'Ann', qty: 1 },
    });
    return response.json().dataId;
  }

  it('finishing a run appends its entry to the saved record’s workflow log in the same statement; only the lease holder finishes', async () => {
    const dataId = await saveRecord();
    const run = newRun();
    const progress = { nextStep: 1, stepInFlight: null, checkpoint: { scope: {} }, steps: [], dataId };
    await journal.insertRunning(run, 'me', progress, 10_000);
    expect(await journal.checkpoint(run.id, 'me', progress, 10_000)).toEqual({ cancelRequested: false });
    expect(await journal.checkpoint(run.id, 'someone else', progress, 10_000)).toBeNull();

    // An instance that lost the lease neither finishes the run nor appends to the record's log.
    expect(
      await journal.finish(run.id, 'someone else', outcome(dataId), { runId: run.id, status: 'stale' }),
    ).toBe(false);
    expect(await journal.finish(run.id, 'me', outcome(dataId), { runId: run.id, status: 'success' })).toBe(
      true,
    );
    // Finished: a second finish (a repeat after a crash, or a stale instance) is refused the same way.
    expect(await journal.finish(run.id, 'me', outcome(dataId), { runId: run.id, status: 'again' })).toBe(
      false,
    );
    expect(await logOf(dataId)).toEqual([{ runId: run.id, status: 'success' }]);
    const stored = await history.findById(run.id);
    expect(stored).toMatchObject({
      status: 'success',
      dataId,
      // What a re-run reuses (here the outcome's, empty).
      checkpoint: {},
      leaseOwner: null,
      stepInFlight: null,
      finishedAt: expect.any(Date),
    });
  });

  it('a run without a record touches no record; one written only at its end is stored finished', async () => {
    const dataId = await saveRecord();
    const run = newRun();
    await journal.insertFinished(run, { ...outcome(null), status: 'failed' }, { runId: run.id });
    expect(await history.findById(run.id)).toMatchObject({ id: run.id, status: 'failed', dataId: null });
    const withRecord = newRun();
    await journal.insertFinished(withRecord, outcome(dataId), { runId: withRecord.id });
    expect(await logOf(dataId)).toEqual([{ runId: withRecord.id }]);
  });

  it('an outbox claim whose lease ran out writes nothing: the newer claim decides the effect', async () => {
    const effects = t.app.get(WorkflowEffectsRepository);
    const run = newRun();
    await journal.insertFinished(run, outcome(null), { runId: run.id }, [
      { stepIndex: 0, effectIndex: 0, stepName: 'mail', kind: 'mail', payload: { to: 'a@example.com' } },
    ]);
    // A lease of 1 ms: due again at once, as if its sender hung past OUTBOX_LEASE_MS.
    const [stale] = await effects.claimDue(1, 1, run.id);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const [fresh] = await effects.claimDue(1, 60_000, run.id);
    expect([stale.attempts, fresh.attempts]).toEqual([1, 2]);

    await effects.markFailed(stale, { code: 'EFFECT_FAILED', message: 'late' });
    await effects.scheduleRetry(stale, 0, { code: 'EFFECT_FAILED', message: 'late' });
    expect(await effects.ofRuns([run.id])).toMatchObject([
      { state: 'pending', attempts: 2, lastError: null },
    ]);
    await effects.markSent(fresh);
    await effects.markFailed(stale, { code: 'EFFECT_FAILED', message: 'late' });
    expect(await effects.ofRuns([run.id])).toMatchObject([{ state: 'sent', attempts: 2, lastError: null }]);
  });

  it('a run cancelled while it pauses at an approval is queued to end, not left waiting, and its mail is not stored', async () => {
    const effects = t.app.get(WorkflowEffectsRepository);
    const run = newRun();
    const progress = { nextStep: 0, stepInFlight: null, checkpoint: {}, steps: [], dataId: null };
    await journal.insertRunning(run, 'instance-a', progress, 60_000);
    // The cancel lands after the driver last read the flag, before its pause.
    expect(await journal.requestCancel(run.id)).toMatchObject({ status: 'running', cancelRequested: true });
    const mail = { stepIndex: 0, effectIndex: 0, stepName: 'approve', kind: 'mail', payload: {} };
    expect(
      await journal.pause(run.id, 'instance-a', progress, new Date(Date.now() + 3_600_000), [mail]),
    ).toBe(true);

    const stored = await history.findById(run.id);
    expect(stored).toMatchObject({ status: 'queued', cancelRequested: true, leaseOwner: null });
    expect(stored!.availableAt!.getTime()).toBeLessThanOrEqual(Date.now() + 1000);
    expect(await effects.ofRuns([run.id])).toEqual([]);
  });

  it('cancelling: a queued run that never started ends at once; a waiting one is queued flagged; a finished one is untouched', async () => {
    const progress = { nextStep: 0, stepInFlight: null, checkpoint: {}, steps: [], dataId: null };
    const queued = newRun();
    await queue.enqueueWithinBound(queued, progress, 100);
    expect(await journal.requestCancel(queued.id)).toMatchObject({
      status: 'cancelled',
      cancelRequested: false,
      message: 'Workflow cancelled before it started',
    });
    const waiting = newRun();
    await journal.insertRunning(waiting, 'instance-a', progress, 60_000);
    await journal.pause(waiting.id, 'instance-a', progress, null, []);
    expect(await journal.requestCancel(waiting.id)).toMatchObject({
      status: 'queued',
      cancelRequested: true,
    });
    const done = newRun();
    await journal.insertFinished(done, outcome(null), { runId: done.id });
    expect(await journal.requestCancel(done.id)).toBeNull();
    expect(await history.findById(done.id)).toMatchObject({ status: 'success', cancelRequested: false });
  });

  it('run retention deletes finished runs started more than WORKFLOW_RUN_RETENTION_DAYS and keeps the rest', async () => {
    const old = newRun();
    const recent = newRun();
    await journal.insertFinished(old, outcome(null), { runId: old.id });
    await journal.insertFinished(recent, outcome(null), { runId: recent.id });
    await t.database.client.db.execute(
      sql`update workflow_runs set started_at = now() - interval '31 days' where id = ${old.id}::uuid`,
    );
    expect(await t.app.get(WorkflowRunRetention).purge()).toBe(1);
    expect(await history.findById(old.id)).toBeNull();
    expect(await history.findById(recent.id)).toMatchObject({ status: 'success' });
  });

  it('the queue gauges count an approval whose timeout is up as due, and one still waiting as not', async () => {
    const progress = { nextStep: 0, stepInFlight: null, checkpoint: {}, steps: [], dataId: null };
    const timedOut = newRun();
    const waiting = newRun();
    for (const run of [timedOut, waiting]) await journal.insertRunning(run, 'instance-a', progress, 60_000);
    await journal.pause(timedOut.id, 'instance-a', progress, new Date(Date.now() - 5_000), []);
    await journal.pause(waiting.id, 'instance-a', progress, new Date(Date.now() + 3_600_000), []);
    const state = await queue.queueState();
    expect(state).toMatchObject({ queued: 0, due: 1, running: 0 });
    expect(state.oldestDueSeconds).toBeGreaterThanOrEqual(4);
  });
  it('triggered runs: concurrent enqueues of one chain or one user never pass a bound; a run id stored already is recognised', async () => {
    const progress = { nextStep: 0, stepInFlight: null, checkpoint: {}, steps: [], dataId: null };
    const [{ id: userId }] = rowsOf(
      await t.database.client.db.execute(sql`select id from users limit 1`),
    ) as {
      id: string;
    }[];
    const triggered = (root: string) => ({ ...newRun(), userId, triggerRoot: root });
    const bounds = { maxRunsPerEvent: 3, maxQueuedPerUser: 5 };

    // Ten dispatchers at once for one root event: three runs, whatever the interleaving.
    const root = randomUUID();
    const outcomes = await Promise.all(
      Array.from({ length: 10 }, () => queue.enqueueTriggered(triggered(root), progress, bounds)),
    );
    expect(outcomes.filter((o) => o === 'queued')).toHaveLength(3);
    expect(outcomes.filter((o) => o === 'runs_per_event')).toHaveLength(7);

    // Other roots, the same user: two more fit under the user's five queued triggered runs.
    const others = await Promise.all(
      Array.from({ length: 6 }, () => queue.enqueueTriggered(triggered(randomUUID()), progress, bounds)),
    );
    expect(others.filter((o) => o === 'queued')).toHaveLength(2);
    expect(others.filter((o) => o === 'queued_per_user')).toHaveLength(4);

    // The same run again (an event handed out twice): recognised before any bound is counted.
    const [{ id: storedId }] = rowsOf(
      await t.database.client.db.execute(
        sql`select id from workflow_runs where trigger_root = ${root}::uuid limit 1`,
      ),
    ) as { id: string }[];
    expect(await queue.enqueueTriggered({ ...triggered(root), id: storedId }, progress, bounds)).toBe(
      'stored_already',
    );
    // The user's own queue is bounded apart: triggered runs take none of its room.
    expect(await queue.enqueueWithinBound({ ...newRun(), userId }, progress, 1)).toBe(true);
  });
});
