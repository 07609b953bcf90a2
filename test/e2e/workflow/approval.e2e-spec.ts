import { createConfig } from '../../factories/config.factory';
import { adminToken, createUser } from '../../factories/user.factory';
import { createTestApp, type TestApp } from '../../utils/test-app';
import { useAppSuite } from '../../utils/app-suite';
import { createTestDatabase } from '../../utils/test-database';
import { activeRecords, createSteps, run, workflowBody } from '../../utils/workflow-api';
import { until } from '../../utils/until';

const settled = (r: any) => !['queued', 'running', 'waiting'].includes(r.status);

describe('approval steps: a run waits durably for a decision, a timeout, or a cancellation', () => {
  /** `s.user` starts the runs; `s.users[1]` is the approver `approvalWorkflow` names. */
  const s = useAppSuite({
    partner: true,
    smtp: true,
    env: { WORKFLOW_POLL_MS: '100', OUTBOX_POLL_MS: '100' },
    users: 2,
    forms: 1,
  });
  /** The suite app's environment, for the apps of the restart test. */
  const restartEnv = () => ({
    WORKFLOW_API_ALLOWED_HOSTS: `127.0.0.1:${s.partner.port}`,
    WORKFLOW_POLL_MS: '100',
    SMTP_URL: s.smtp.url,
    MAIL_FROM: 'forms@example.com',
    OUTBOX_POLL_MS: '100',
  });

  /** save, approval (by `s.users[1]`, or `by.approverId`), then a call that reports the decision. */
  function approvalWorkflow(
    app: TestApp,
    approval: Record<string, unknown> = {},
    onError?: string,
    by = { admin: s.admin, approverId: s.users[1].user.id },
  ) {
    return createSteps(app, by.admin, [
      { name: 'store', type: 'save' },
      {
        name: 'approve',
        type: 'approval',
        ...(onError ? { onError } : {}),
        config: {
          approvers: { users: [by.approverId], roles: ['auditor'] },
          notify: {
            to: 'boss@example.com',
            subject: 'Approve the order of {{input.name}}',
            text: 'Order of {{input.name}}: {{approval.link}}',
          },
          ...approval,
        },
      },
      {
        name: 'tell',
        type: 'api',
        config: {
          url: s.partner.url('/hook'),
          method: 'POST',
          payload: { approved: '{{results.approve.approved}}', id: '{{savedData._id}}' },
        },
      },
    ]);
  }
  const runOf = async (app: TestApp, runId: string, token = s.user.token) =>
    (await app.request({ method: 'GET', url: `/api/workflow/runs/${runId}`, token })).json();
  const decide = (
    app: TestApp,
    token: string,
    runId: string,
    body: Record<string, unknown>,
    step = 'approve',
  ) =>
    app.request({
      method: 'POST',
      url: `/api/workflow/runs/${runId}/steps/${step}/decision`,
      token,
      payload: body,
    });

  it('pauses `waiting` (listed, mailed with a link), refuses who may not decide (403), approves once (409 after)', async () => {
    const workflowId = await approvalWorkflow(s.t);
    const paused = await run(s.t, s.user.token, workflowId, s.configId, { name: 'Ann', qty: 2 });
    expect(paused).toMatchObject({ status: 'waiting', success: false, steps: [{ name: 'store' }] });
    const runId = paused.runId;
    expect(await runOf(s.t, runId)).toMatchObject({
      status: 'waiting',
      waitingFor: { step: 'approve', until: null },
    });
    const [mail] = await s.smtp.waitFor(1);
    expect(mail.subject).toBe('Approve the order of Ann');
    expect(mail.text).toContain(`/api/workflow/runs/${runId}/steps/approve/decision`);

    const waiting = await s.t.request({
      method: 'GET',
      url: '/api/workflow/runs?status=waiting',
      token: s.user.token,
    });
    expect(waiting.json()).toMatchObject({ totalCount: 1, data: [{ id: runId, status: 'waiting' }] });
    const others = await s.t.request({
      method: 'GET',
      url: '/api/workflow/runs?status=waiting',
      token: s.users[1].token,
    });
    expect(others.json().totalCount).toBe(0);

    // The run's own starter is not named among the approvers.
    const refused = await decide(s.t, s.user.token, runId, { approve: true });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ code: 'FORBIDDEN' });
    const wrongStep = await decide(s.t, s.users[1].token, runId, { approve: true }, 'store');
    expect(wrongStep.statusCode).toBe(409);
    expect(wrongStep.json()).toMatchObject({ code: 'WORKFLOW_RUN_NOT_WAITING' });

    const decided = await decide(s.t, s.users[1].token, runId, { approve: true, comment: 'fine' });
    expect(decided.statusCode).toBe(200);
    expect(decided.json()).toMatchObject({ id: runId, status: 'queued' });
    const second = await decide(s.t, s.users[1].token, runId, { approve: false });
    expect(second.statusCode).toBe(409);
    expect(second.json()).toMatchObject({ code: 'WORKFLOW_APPROVAL_DECIDED' });

    const done = await until(() => runOf(s.t, runId), settled, 'the approved run');
    expect(done).toMatchObject({
      status: 'success',
      waitingFor: null,
      steps: [
        { name: 'store', status: 'success' },
        {
          name: 'approve',
          status: 'success',
          result: {
            approved: true,
            decidedBy: { userId: s.users[1].user.id, email: s.users[1].user.email },
            startedBy: { userId: s.user.user.id, email: s.user.user.email },
            decidedAt: expect.any(String),
            comment: 'fine',
          },
        },
        { name: 'tell', status: 'success' },
      ],
    });
    expect(JSON.parse(s.partner.requests[0].body)).toEqual({ approved: true, id: done.dataId });
    expect((await activeRecords(s.t, s.admin, s.configId)).total).toBe(1);
    const after = await decide(s.t, s.users[1].token, runId, { approve: true });
    expect(after.statusCode).toBe(409);
    expect(after.json()).toMatchObject({ code: 'WORKFLOW_APPROVAL_DECIDED' });
  });

  it("the run's starter may not decide through a role or as an admin (403) unless named in approvers.users or allowSelfApproval is set", async () => {
    const manager = await createUser(s.t, { role: 'manager' });
    const otherManager = await createUser(s.t, { role: 'manager' });
    const byManagers = (config: Record<string, unknown> = {}) =>
      createSteps(
        s.t,
        s.admin,
        [
          { name: 'store', type: 'save' },
          { name: 'approve', type: 'approval', config: { approvers: { roles: ['manager'] }, ...config } },
        ],
        { permissions: { roles: ['manager'] } },
      );
    const readRun = async (runId: string) =>
      (await s.t.request({ method: 'GET', url: `/api/workflow/runs/${runId}`, token: s.admin })).json();
    const selfRefused = { success: false, code: 'WORKFLOW_SELF_APPROVAL_FORBIDDEN', statusCode: 403 };

    // A manager's own run, approvable by the manager role: not by that manager (nor is it decided).
    const plain = await byManagers();
    const own = await run(s.t, manager.token, plain, s.configId, { name: 'Ann', qty: 1 });
    const refused = await decide(s.t, manager.token, own.runId, { approve: true });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ ...selfRefused, error: expect.any(String) });
    expect(await readRun(own.runId)).toMatchObject({ status: 'waiting', waitingFor: { step: 'approve' } });
    // Another manager decides; the decision names who decided and whose run it is.
    expect((await decide(s.t, otherManager.token, own.runId, { approve: true })).statusCode).toBe(200);
    expect(await until(() => readRun(own.runId), settled, 'the approved run')).toMatchObject({
      status: 'success',
      userId: manager.user.id,
      steps: [
        {},
        {
          name: 'approve',
          result: {
            approved: true,
            decidedBy: { userId: otherManager.user.id, email: otherManager.user.email },
            startedBy: { userId: manager.user.id, email: manager.user.email },
          },
        },
      ],
    });

    // An admin who started the run is its starter too: another admin or approver decides.
    const adminRun = await run(s.t, s.admin, plain, s.configId, { name: 'Bo', qty: 1 });
    const adminRefused = await decide(s.t, s.admin, adminRun.runId, { approve: false });
    expect(adminRefused.statusCode).toBe(403);
    expect(adminRefused.json()).toMatchObject(selfRefused);
    expect((await decide(s.t, manager.token, adminRun.runId, { approve: true })).statusCode).toBe(200);

    // Named by id: the starter decides.
    const named = await byManagers({ approvers: { roles: ['manager'], users: [manager.user.id] } });
    const namedRun = await run(s.t, manager.token, named, s.configId, { name: 'Cy', qty: 1 });
    expect((await decide(s.t, manager.token, namedRun.runId, { approve: true })).statusCode).toBe(200);

    // allowSelfApproval: the starter decides through their role.
    const allowed = await byManagers({ allowSelfApproval: true });
    const allowedRun = await run(s.t, manager.token, allowed, s.configId, { name: 'Di', qty: 1 });
    expect((await decide(s.t, manager.token, allowedRun.runId, { approve: true })).statusCode).toBe(200);
    expect(await until(() => readRun(allowedRun.runId), settled, 'the self-approved run')).toMatchObject({
      status: 'success',
      steps: [
        {},
        {
          result: {
            decidedBy: { userId: manager.user.id, email: manager.user.email },
            startedBy: { userId: manager.user.id, email: manager.user.email },
          },
        },
      ],
    });

    // A value that is not a boolean is refused when the workflow is saved.
    const bad = await s.t.request({
      method: 'POST',
      url: '/api/workflow',
      token: s.admin,
      payload: workflowBody({
        config: {
          steps: [{ name: 'approve', type: 'approval', config: { approvers: {}, allowSelfApproval: 'yes' } }],
        },
      }),
    });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().validationErrors).toEqual([
      expect.objectContaining({ field: 'config.steps[0].config.allowSelfApproval' }),
    ]);
  });

  it('a rejection fails the step (onError applies; the decision is still a result)', async () => {
    const workflowId = await approvalWorkflow(s.t, {}, 'continue');
    const { runId } = await run(s.t, s.user.token, workflowId, s.configId, { name: 'Bob', qty: 1 });
    // An admin may always decide.
    expect((await decide(s.t, s.admin, runId, { approve: false, comment: 'no' })).statusCode).toBe(200);
    const done = await until(() => runOf(s.t, runId), settled, 'the rejected run');
    expect(done.steps[1]).toMatchObject({
      name: 'approve',
      status: 'failed',
      error: { code: 'APPROVAL_REJECTED' },
      result: { approved: false, comment: 'no' },
    });
    expect(done.status).toBe('success');
    expect(JSON.parse(s.partner.requests[0].body)).toMatchObject({ approved: false });

    const stopped = await approvalWorkflow(s.t);
    const second = await run(s.t, s.user.token, stopped, s.configId, { name: 'Cy', qty: 1 });
    await decide(s.t, s.users[1].token, second.runId, { approve: false });
    expect(await until(() => runOf(s.t, second.runId), settled, 'the stopped run')).toMatchObject({
      status: 'failed',
      steps: [{ name: 'store' }, { name: 'approve', error: { code: 'APPROVAL_REJECTED' } }],
    });
  });

  it('the timeout decides with its outcome', async () => {
    // A waiting run shows its deadline: one far enough away that a loaded machine cannot pass it first.
    const patient = await approvalWorkflow(s.t, { timeoutMs: 60_000, onTimeout: 'approve' });
    const waiting = await run(s.t, s.user.token, patient, s.configId, { name: 'Cy', qty: 1 });
    const deadline = Date.parse((await runOf(s.t, waiting.runId)).waitingFor.until);
    expect(deadline - Date.now()).toBeGreaterThan(30_000);
    expect(deadline - Date.now()).toBeLessThanOrEqual(60_000);
    const cancelled = await s.t.request({
      method: 'POST',
      url: `/api/workflow/runs/${waiting.runId}/cancel`,
      token: s.user.token,
    });
    expect(cancelled.statusCode).toBe(200);

    const approving = await approvalWorkflow(s.t, { timeoutMs: 300, onTimeout: 'approve' });
    const first = await run(s.t, s.user.token, approving, s.configId, { name: 'Di', qty: 1 });
    const approved = await until(() => runOf(s.t, first.runId), settled, 'the timed-out run');
    expect(approved).toMatchObject({
      status: 'success',
      steps: [{}, { name: 'approve', result: { approved: true, decidedBy: null, timedOut: true } }, {}],
    });
    const rejecting = await approvalWorkflow(s.t, { timeoutMs: 300 });
    const second = await run(s.t, s.user.token, rejecting, s.configId, { name: 'Ed', qty: 1 });
    expect(await until(() => runOf(s.t, second.runId), settled, 'the timed-out run')).toMatchObject({
      status: 'failed',
      steps: [{}, { name: 'approve', error: { code: 'APPROVAL_TIMED_OUT' }, result: { approved: false } }],
    });
    const late = await decide(s.t, s.users[1].token, second.runId, { approve: true });
    expect(late.statusCode).toBe(409);
  });

  it('a waiting run is cancelled (the cancel route) and then no longer waits', async () => {
    const workflowId = await approvalWorkflow(s.t);
    const { runId } = await run(s.t, s.user.token, workflowId, s.configId, { name: 'Fay', qty: 1 });
    const cancel = await s.t.request({
      method: 'POST',
      url: `/api/workflow/runs/${runId}/cancel`,
      token: s.user.token,
    });
    expect(cancel.statusCode).toBe(200);
    expect(await until(() => runOf(s.t, runId), settled, 'the cancelled run')).toMatchObject({
      status: 'cancelled',
    });
    const decided = await decide(s.t, s.users[1].token, runId, { approve: true });
    expect(decided.statusCode).toBe(409);
    expect(decided.json()).toMatchObject({ code: 'WORKFLOW_RUN_NOT_WAITING' });
    expect(s.partner.requests).toHaveLength(0);
  });

  it('survives a restart: the app closes while the run waits; a new app on the same database resumes it', async () => {
    const database = await createTestDatabase();
    let first: TestApp | null = await createTestApp({ database, env: restartEnv() });
    try {
      const admin = await adminToken(first);
      const user = await createUser(first);
      const approver = await createUser(first);
      const configId = await createConfig(first, admin);
      const workflowId = await approvalWorkflow(first, {}, undefined, {
        admin,
        approverId: approver.user.id,
      });
      const { runId } = await run(first, user.token, workflowId, configId, { name: 'Gus', qty: 1 });
      await first.close();
      first = null;
      const second = await createTestApp({ database, env: restartEnv() });
      try {
        expect(await runOf(second, runId, user.token)).toMatchObject({ status: 'waiting' });
        expect((await decide(second, approver.token, runId, { approve: true })).statusCode).toBe(200);
        expect(await until(() => runOf(second, runId, user.token), settled, 'the resumed run')).toMatchObject(
          {
            status: 'success',
            steps: [{ name: 'store' }, { name: 'approve', result: { approved: true } }, { name: 'tell' }],
          },
        );
      } finally {
        await second.close();
      }
    } finally {
      await first?.close();
      await database.close();
    }
  });
});
