import { sql } from 'drizzle-orm';
import { createRole } from '../../factories/role.factory';
import { createSite } from '../../factories/site.factory';
import { createUser } from '../../factories/user.factory';
import { useAppSuite, WORKFLOW_SUITE } from '../../utils/app-suite';
import { GateStep, GateStepModule } from '../../utils/workflow-gate-step';
import { activeRecords, createSteps, execute, executeAsync, waitForRun } from '../../utils/workflow-api';

/**
 * A run outlives its request: while it waits on a retry its caller may be deactivated, demoted or
 * moved to another site. The run re-reads the caller before going on and ends `failed` with the
 * code of the refusal; the `save` after the retried call never stores a record.
 */
describe('workflow runs re-check their caller (active, role, site) before steps with an effect', () => {
  let calls: number;
  const s = useAppSuite({ ...WORKFLOW_SUITE, modules: [GateStepModule] });
  beforeEach(() => {
    calls = 0;
    // The first call fails (retryable), every later one succeeds.
    s.partner.handle((_req, res) => {
      calls += 1;
      res.writeHead(calls === 1 ? 503 : 200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });

  /** Calls the partner (retried after `delayMs`), then saves: the save must not happen. */
  const callThenSave = (delayMs: number) =>
    createSteps(
      s.t,
      s.admin,
      [
        { name: 'call', type: 'api', config: { url: s.partner.url('/hook') } },
        { name: 'store', type: 'save' },
      ],
      { config: { retry: { enabled: true, maxAttempts: 3, backoff: 'fixed', delayMs } } },
    );

  async function patchUser(body: Record<string, unknown>): Promise<void> {
    const response = await s.t.request({
      method: 'PUT',
      url: `/api/users/${s.user.user.id}`,
      token: s.admin,
      payload: body,
    });
    expect(response.statusCode).toBe(200);
  }

  /**
   * Executes the workflow as the user inside the request, deactivates them while the run waits at
   * the pure step's `gate`, and opens the gate 150 ms later (past the 100 ms a check holds).
   */
  async function runDeactivatedAtGate(workflowId: string, gate: string) {
    const pending = execute(s.t, s.user.token, workflowId, s.configId, { name: 'Ann', qty: 2 });
    while (!GateStep.isWaiting(gate)) await new Promise((resolve) => setTimeout(resolve, 20));
    await patchUser({ isActive: false });
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(GateStep.open(gate)).toBe(true);
    return pending;
  }

  /** A role that may read workflows but not execute them; the change a demotion makes. */
  async function demotion(): Promise<Record<string, unknown>> {
    await createRole(s.t, s.admin, 'reader', { configs: ['read'], workflows: ['read'] });
    return { role: 'reader' };
  }

  it.each<[string, () => Promise<Record<string, unknown>>, string]>([
    ['deactivated', async () => ({ isActive: false }), 'USER_INACTIVE'],
    ['demoted (no workflows:execute)', demotion, 'FORBIDDEN'],
    [
      'moved to another site',
      async () => ({ siteId: await createSite(s.t, s.admin, 'Elsewhere', 'elsewhere.example.com') }),
      'FORBIDDEN',
    ],
  ])(
    'a queued run whose caller was %s while it waited on a retry ends failed (%s), nothing saved',
    async (_what, change, code) => {
      const workflowId = await callThenSave(1500);
      const queued = await executeAsync(s.t, s.user.token, workflowId, s.configId, { name: 'Ann', qty: 2 });
      expect(queued.statusCode).toBe(202);
      const runId = queued.json().runId;
      await waitForRun(s.t, s.admin, runId, (run) => run.status === 'queued' && calls === 1);
      await patchUser(await change());
      const run = await waitForRun(s.t, s.admin, runId);
      expect(run).toMatchObject({
        status: 'failed',
        dataId: null,
        steps: [{ name: 'call', status: 'failed', error: { code } }],
      });
      expect(run.steps).toHaveLength(1);
      expect(calls).toBe(1);
      expect((await activeRecords(s.t, s.admin, s.configId)).total).toBe(0);
    },
  );

  it('a manager demoted to user while the retry waits: the save on a managers-only form stores nothing (FORBIDDEN before the step)', async () => {
    // Only managers may write the form; a plain user may still see it and run workflows on it.
    const grants = await s.t.request({
      method: 'PUT',
      url: `/api/permissions/${s.configId}`,
      token: s.admin,
      payload: {
        roles: {
          manager: ['viewForm', 'createResults', 'viewOwnResults', 'executeWorkflows'],
          user: ['viewForm', 'viewOwnResults', 'executeWorkflows'],
        },
      },
    });
    expect(grants.statusCode).toBe(200);
    const manager = await createUser(s.t, { role: 'manager' });
    const workflowId = await createSteps(
      s.t,
      s.admin,
      [
        { name: 'call', type: 'api', config: { url: s.partner.url('/hook') } },
        // `continue`: a refusal by the save itself would let the run end `success`; the re-check ends it.
        { name: 'store', type: 'save', onError: 'continue' },
      ],
      {
        permissions: { roles: ['manager', 'user'] },
        config: { retry: { enabled: true, maxAttempts: 3, backoff: 'fixed', delayMs: 1500 } },
      },
    );
    const queued = await executeAsync(s.t, manager.token, workflowId, s.configId, { name: 'Ann', qty: 2 });
    expect(queued.statusCode).toBe(202);
    const runId = queued.json().runId;
    await waitForRun(s.t, s.admin, runId, (run) => run.status === 'queued' && calls === 1);
    const demoted = await s.t.request({
      method: 'PUT',
      url: `/api/users/${manager.user.id}`,
      token: s.admin,
      payload: { role: 'user' },
    });
    expect(demoted.statusCode).toBe(200);
    const run = await waitForRun(s.t, s.admin, runId);
    expect(run).toMatchObject({
      status: 'failed',
      dataId: null,
      steps: [
        { name: 'call', status: 'success' },
        { name: 'store', status: 'failed', error: { code: 'FORBIDDEN' } },
      ],
    });
    expect(calls).toBe(2);
    expect((await activeRecords(s.t, s.admin, s.configId)).total).toBe(0);
  });

  it('a run inside its request whose caller is deactivated during a retry wait ends failed (USER_INACTIVE)', async () => {
    const workflowId = await callThenSave(1500);
    const pending = execute(s.t, s.user.token, workflowId, s.configId, { name: 'Ann', qty: 2 });
    while (calls === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    await patchUser({ isActive: false });
    const response = await pending;
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({
      success: false,
      status: 'failed',
      data: null,
      steps: [{ name: 'call', status: 'failed', error: { code: 'USER_INACTIVE' } }],
    });
    expect(response.json().steps).toHaveLength(1);
    expect(calls).toBe(1);
    expect((await activeRecords(s.t, s.admin, s.configId)).total).toBe(0);
  });

  it('a pure step that outlasts the request check (100 ms): the caller is read again before the save', async () => {
    const workflowId = await createSteps(s.t, s.admin, [
      { name: 'think', type: 'pure-gate', config: { gate: 'recheck-pure' } },
      { name: 'store', type: 'save' },
    ]);
    const response = await runDeactivatedAtGate(workflowId, 'recheck-pure');
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({
      success: false,
      status: 'failed',
      data: null,
      steps: [
        { name: 'think', status: 'success' },
        { name: 'store', status: 'failed', error: { code: 'USER_INACTIVE' } },
      ],
    });
    expect((await activeRecords(s.t, s.admin, s.configId)).total).toBe(0);
  });

  it('the check before a call marked by the save reads the account in the save statement: a deactivation no cache has seen stops the call', async () => {
    const workflowId = await createSteps(s.t, s.admin, [
      { name: 'store', type: 'save' },
      { name: 'call', type: 'api', config: { url: s.partner.url('/hook') } },
    ]);
    // The caller's account is in the request's cache as active; then deactivated behind its back.
    const seen = await s.t.request({
      method: 'GET',
      url: `/api/workflow/${workflowId}`,
      token: s.user.token,
    });
    expect(seen.statusCode).toBe(200);
    await s.t.database.client.db.execute(
      sql`update users set is_active = false where id = ${s.user.user.id}::uuid`,
    );
    const response = await execute(s.t, s.user.token, workflowId, s.configId, { name: 'Ann', qty: 2 });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({
      success: false,
      status: 'failed',
      steps: [
        { name: 'store', status: 'success' },
        { name: 'call', status: 'failed', error: { code: 'USER_INACTIVE' } },
      ],
    });
    expect(calls).toBe(0);
  });

  it('a read by the save statement no longer counts once a pure step outlasts it (100 ms): the caller is read again before the call', async () => {
    const workflowId = await createSteps(s.t, s.admin, [
      { name: 'store', type: 'save' },
      { name: 'think', type: 'pure-gate', config: { gate: 'recheck-after-save' } },
      { name: 'call', type: 'api', config: { url: s.partner.url('/hook') } },
    ]);
    const response = await runDeactivatedAtGate(workflowId, 'recheck-after-save');
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({
      success: false,
      status: 'failed',
      steps: [
        { name: 'store', status: 'success' },
        { name: 'think', status: 'success' },
        { name: 'call', status: 'failed', error: { code: 'USER_INACTIVE' } },
      ],
    });
    expect(calls).toBe(0);
    expect((await activeRecords(s.t, s.admin, s.configId)).total).toBe(1);
  });

  it('a caller who keeps the right is not disturbed: the retried run saves its record', async () => {
    const workflowId = await callThenSave(200);
    const queued = await executeAsync(s.t, s.user.token, workflowId, s.configId, { name: 'Ann', qty: 2 });
    const run = await waitForRun(s.t, s.admin, queued.json().runId);
    expect(run.steps).toMatchObject([{ status: 'success' }, { status: 'success' }]);
    expect(run.status).toBe('success');
    expect((await activeRecords(s.t, s.admin, s.configId)).total).toBe(1);
  });
});
