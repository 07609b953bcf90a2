import { createConfig } from '../../factories/config.factory';
import { adminToken, createUser, type TestUser } from '../../factories/user.factory';
import { startHttpServer, type HttpTestServer } from '../../utils/http-test-server';
import { startSmtpTestServer, type SmtpTestServer } from '../../utils/smtp-test-server';
import { createTestApp, type TestApp } from '../../utils/test-app';
import { createTestDatabase } from '../../utils/test-database';
import { activeRecords, createSteps, run, workflowBody } from '../../utils/workflow-api';
import { until } from '../../utils/until';

const settled = (r: any) => !['queued', 'running', 'waiting'].includes(r.status);

describe('approval steps: a run waits durably for a decision, a timeout, or a cancellation', () => {
  let receiver: HttpTestServer;
  let smtp: SmtpTestServer;
  let t: TestApp;
  let admin: string;
  let user: TestUser;
  let approver: TestUser;
  let configId: string;
  const env = () => ({
    WORKFLOW_API_ALLOWED_HOSTS: `127.0.0.1:${receiver.port}`,
    WORKFLOW_POLL_MS: '100',
    SMTP_URL: smtp.url,
    MAIL_FROM: 'forms@example.com',
    OUTBOX_POLL_MS: '100',
  });

  beforeAll(async () => {
    receiver = await startHttpServer();
    smtp = await startSmtpTestServer();
    t = await createTestApp({ env: env() });
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
    await smtp.close();
  });
  beforeEach(async () => {
    await t.reset();
    receiver.reset();
    admin = await adminToken(t);
    user = await createUser(t);
    approver = await createUser(t);
    configId = await createConfig(t, admin);
  });

  /** save, approval (by `approver`), then a call that reports the decision. */
  function approvalWorkflow(app: TestApp, approval: Record<string, unknown> = {}, onError?: string) {
    return createSteps(app, admin, [
      { name: 'store', type: 'save' },
      {
        name: 'approve',
        type: 'approval',
        ...(onError ? { onError } : {}),
        config: {
          approvers: { users: [approver.user.id], roles: ['auditor'] },
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
          url: receiver.url('/hook'),
          method: 'POST',
          payload: { approved: '{{results.approve.approved}}', id: '{{savedData._id}}' },
        },
      },
    ]);
  }
  const runOf = async (app: TestApp, runId: string) =>
    (await app.request({ method: 'GET', url: `/api/workflow/runs/${runId}`, token: user.token })).json();
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
    const workflowId = await approvalWorkflow(t);
    const paused = await run(t, user.token, workflowId, configId, { name: 'Ann', qty: 2 });
    expect(paused).toMatchObject({ status: 'waiting', success: false, steps: [{ name: 'store' }] });
    const runId = paused.runId;
    expect(await runOf(t, runId)).toMatchObject({
      status: 'waiting',
      waitingFor: { step: 'approve', until: null },
    });
    const [mail] = await smtp.waitFor(1);
    expect(mail.subject).toBe('Approve the order of Ann');
    expect(mail.text).toContain(`/api/workflow/runs/${runId}/steps/approve/decision`);

    const waiting = await t.request({
      method: 'GET',
      url: '/api/workflow/runs?status=waiting',
      token: user.token,
    });
    expect(waiting.json()).toMatchObject({ totalCount: 1, data: [{ id: runId, status: 'waiting' }] });
    const others = await t.request({
      method: 'GET',
      url: '/api/workflow/runs?status=waiting',
      token: approver.token,
    });
    expect(others.json().totalCount).toBe(0);

    // The run's own starter is not named among the approvers.
    const refused = await decide(t, user.token, runId, { approve: true });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ code: 'FORBIDDEN' });
    const wrongStep = await decide(t, approver.token, runId, { approve: true }, 'store');
    expect(wrongStep.statusCode).toBe(409);
    expect(wrongStep.json()).toMatchObject({ code: 'WORKFLOW_RUN_NOT_WAITING' });

    const decided = await decide(t, approver.token, runId, { approve: true, comment: 'fine' });
    expect(decided.statusCode).toBe(200);
    expect(decided.json()).toMatchObject({ id: runId, status: 'queued' });
    const second = await decide(t, approver.token, runId, { approve: false });
    expect(second.statusCode).toBe(409);
    expect(second.json()).toMatchObject({ code: 'WORKFLOW_APPROVAL_DECIDED' });

    const done = await until(() => runOf(t, runId), settled, 'the approved run');
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
            decidedBy: { userId: approver.user.id, email: approver.user.email },
            startedBy: { userId: user.user.id, email: user.user.email },
            decidedAt: expect.any(String),
            comment: 'fine',
          },
        },
        { name: 'tell', status: 'success' },
      ],
    });
    expect(JSON.parse(receiver.requests[0].body)).toEqual({ approved: true, id: done.dataId });
    expect((await activeRecords(t, admin, configId)).total).toBe(1);
    const after = await decide(t, approver.token, runId, { approve: true });
    expect(after.statusCode).toBe(409);
    expect(after.json()).toMatchObject({ code: 'WORKFLOW_APPROVAL_DECIDED' });
  });

  it("the run's starter may not decide through a role or as an admin (403) unless named in approvers.users or allowSelfApproval is set", async () => {
    const manager = await createUser(t, { role: 'manager' });
    const otherManager = await createUser(t, { role: 'manager' });
    const byManagers = (config: Record<string, unknown> = {}) =>
      createSteps(
        t,
        admin,
        [
          { name: 'store', type: 'save' },
          { name: 'approve', type: 'approval', config: { approvers: { roles: ['manager'] }, ...config } },
        ],
        { permissions: { roles: ['manager'] } },
      );
    const readRun = async (runId: string) =>
      (await t.request({ method: 'GET', url: `/api/workflow/runs/${runId}`, token: admin })).json();
    const selfRefused = { success: false, code: 'WORKFLOW_SELF_APPROVAL_FORBIDDEN', statusCode: 403 };

    // A manager's own run, approvable by the manager role: not by that manager (nor is it decided).
    const plain = await byManagers();
    const own = await run(t, manager.token, plain, configId, { name: 'Ann', qty: 1 });
    const refused = await decide(t, manager.token, own.runId, { approve: true });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ ...selfRefused, error: expect.any(String) });
    expect(await readRun(own.runId)).toMatchObject({ status: 'waiting', waitingFor: { step: 'approve' } });
    // Another manager decides; the decision names who decided and whose run it is.
    expect((await decide(t, otherManager.token, own.runId, { approve: true })).statusCode).toBe(200);
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
    const adminRun = await run(t, admin, plain, configId, { name: 'Bo', qty: 1 });
    const adminRefused = await decide(t, admin, adminRun.runId, { approve: false });
    expect(adminRefused.statusCode).toBe(403);
    expect(adminRefused.json()).toMatchObject(selfRefused);
    expect((await decide(t, manager.token, adminRun.runId, { approve: true })).statusCode).toBe(200);

    // Named by id: the starter decides.
    const named = await byManagers({ approvers: { roles: ['manager'], users: [manager.user.id] } });
    const namedRun = await run(t, manager.token, named, configId, { name: 'Cy', qty: 1 });
    expect((await decide(t, manager.token, namedRun.runId, { approve: true })).statusCode).toBe(200);

    // allowSelfApproval: the starter decides through their role.
    const allowed = await byManagers({ allowSelfApproval: true });
    const allowedRun = await run(t, manager.token, allowed, configId, { name: 'Di', qty: 1 });
    expect((await decide(t, manager.token, allowedRun.runId, { approve: true })).statusCode).toBe(200);
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
    const bad = await t.request({
      method: 'POST',
      url: '/api/workflow',
      token: admin,
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
    const workflowId = await approvalWorkflow(t, {}, 'continue');
    const { runId } = await run(t, user.token, workflowId, configId, { name: 'Bob', qty: 1 });
    // An admin may always decide.
    expect((await decide(t, admin, runId, { approve: false, comment: 'no' })).statusCode).toBe(200);
    const done = await until(() => runOf(t, runId), settled, 'the rejected run');
    expect(done.steps[1]).toMatchObject({
      name: 'approve',
      status: 'failed',
      error: { code: 'APPROVAL_REJECTED' },
      result: { approved: false, comment: 'no' },
    });
    expect(done.status).toBe('success');
    expect(JSON.parse(receiver.requests[0].body)).toMatchObject({ approved: false });

    const stopped = await approvalWorkflow(t);
    const second = await run(t, user.token, stopped, configId, { name: 'Cy', qty: 1 });
    await decide(t, approver.token, second.runId, { approve: false });
    expect(await until(() => runOf(t, second.runId), settled, 'the stopped run')).toMatchObject({
      status: 'failed',
      steps: [{ name: 'store' }, { name: 'approve', error: { code: 'APPROVAL_REJECTED' } }],
    });
  });

  it('the timeout decides with its outcome', async () => {
    // A waiting run shows its deadline: one far enough away that a loaded machine cannot pass it first.
    const patient = await approvalWorkflow(t, { timeoutMs: 60_000, onTimeout: 'approve' });
    const waiting = await run(t, user.token, patient, configId, { name: 'Cy', qty: 1 });
    const deadline = Date.parse((await runOf(t, waiting.runId)).waitingFor.until);
    expect(deadline - Date.now()).toBeGreaterThan(30_000);
    expect(deadline - Date.now()).toBeLessThanOrEqual(60_000);
    const cancelled = await t.request({
      method: 'POST',
      url: `/api/workflow/runs/${waiting.runId}/cancel`,
      token: user.token,
    });
    expect(cancelled.statusCode).toBe(200);

    const approving = await approvalWorkflow(t, { timeoutMs: 300, onTimeout: 'approve' });
    const first = await run(t, user.token, approving, configId, { name: 'Di', qty: 1 });
    const approved = await until(() => runOf(t, first.runId), settled, 'the timed-out run');
    expect(approved).toMatchObject({
      status: 'success',
      steps: [{}, { name: 'approve', result: { approved: true, decidedBy: null, timedOut: true } }, {}],
    });
    const rejecting = await approvalWorkflow(t, { timeoutMs: 300 });
    const second = await run(t, user.token, rejecting, configId, { name: 'Ed', qty: 1 });
    expect(await until(() => runOf(t, second.runId), settled, 'the timed-out run')).toMatchObject({
      status: 'failed',
      steps: [{}, { name: 'approve', error: { code: 'APPROVAL_TIMED_OUT' }, result: { approved: false } }],
    });
    const late = await decide(t, approver.token, second.runId, { approve: true });
    expect(late.statusCode).toBe(409);
  });

  it('a waiting run is cancelled (the cancel route) and then no longer waits', async () => {
    const workflowId = await approvalWorkflow(t);
    const { runId } = await run(t, user.token, workflowId, configId, { name: 'Fay', qty: 1 });
    const cancel = await t.request({
      method: 'POST',
      url: `/api/workflow/runs/${runId}/cancel`,
      token: user.token,
    });
    expect(cancel.statusCode).toBe(200);
    expect(await until(() => runOf(t, runId), settled, 'the cancelled run')).toMatchObject({
      status: 'cancelled',
    });
    const decided = await decide(t, approver.token, runId, { approve: true });
    expect(decided.statusCode).toBe(409);
    expect(decided.json()).toMatchObject({ code: 'WORKFLOW_RUN_NOT_WAITING' });
    expect(receiver.requests).toHaveLength(0);
  });

  it('survives a restart: the app closes while the run waits; a new app on the same database resumes it', async () => {
    const database = await createTestDatabase();
    let first: TestApp | null = await createTestApp({ database, env: env() });
    try {
      admin = await adminToken(first);
      user = await createUser(first);
      approver = await createUser(first);
      configId = await createConfig(first, admin);
      const workflowId = await approvalWorkflow(first);
      const { runId } = await run(first, user.token, workflowId, configId, { name: 'Gus', qty: 1 });
      await first.close();
      first = null;
      const second = await createTestApp({ database, env: env() });
      try {
        expect(await runOf(second, runId)).toMatchObject({ status: 'waiting' });
        expect((await decide(second, approver.token, runId, { approve: true })).statusCode).toBe(200);
        expect(await until(() => runOf(second, runId), settled, 'the resumed run')).toMatchObject({
          status: 'success',
          steps: [{ name: 'store' }, { name: 'approve', result: { approved: true } }, { name: 'tell' }],
        });
      } finally {
        await second.close();
      }
    } finally {
      await first?.close();
      await database.close();
    }
  });
});
