import { createConfig } from '../../factories/config.factory';
import { useAppSuite } from '../../utils/app-suite';
import { createTestApp } from '../../utils/test-app';
import {
  activeRecords,
  createSteps,
  execute,
  executeAsync,
  finished,
  listRuns,
  saveThenPost,
  waitForRun,
} from '../../utils/workflow-api';
import { GateStep, GateStepModule } from '../../utils/workflow-gate-step';
import { untilTrue } from '../../utils/until';

describe('durable workflow runs: asynchronous execution, cancellation, dry run, two instances', () => {
  const s = useAppSuite({
    env: { WORKFLOW_POLL_MS: '100' },
    modules: [GateStepModule],
    partner: true,
    users: 1,
  });

  const runsOf = (workflowId: string, query = '', token = s.user.token) =>
    listRuns(s.t, token, workflowId, query);
  const cancel = (runId: string) =>
    s.t.request({ method: 'POST', url: `/api/workflow/runs/${runId}/cancel`, token: s.user.token });
  /** The id of the workflow's one run, once it has called the partner. */
  async function callingRun(workflowId: string): Promise<string> {
    const started = async () => (await runsOf(workflowId)).totalCount > 0 && s.partner.requests.length > 0;
    await untilTrue(started, 'the run to call the partner');
    return (await runsOf(workflowId)).data[0].id;
  }

  it('Prefer: respond-async answers 202 with Location; the queue runs it to success', async () => {
    const configId = await createConfig(s.t, s.admin);
    const workflowId = await createSteps(s.t, s.admin, saveThenPost(s.partner.url('/hook')));
    const queued = await executeAsync(s.t, s.user.token, workflowId, configId, { name: 'Ann', qty: 2 });
    expect(queued.statusCode).toBe(202);
    expect(queued.json()).toEqual({ runId: expect.any(String), status: 'queued' });
    expect(queued.headers.location).toBe(`/api/workflow/runs/${queued.json().runId}`);
    const run = await waitForRun(s.t, s.user.token, queued.json().runId);
    expect(run).toMatchObject({
      status: 'success',
      steps: [
        { name: 'store', status: 'success', attempts: 1 },
        { name: 'tell', status: 'success', attempts: 1 },
      ],
    });
    expect(s.partner.requests).toHaveLength(1);
    expect(JSON.parse(s.partner.requests[0].body)).toEqual({ id: run.dataId });
    expect((await activeRecords(s.t, s.admin, configId)).total).toBe(1);
  });

  it('an asynchronous retry waits in the queue, not in the process, and then succeeds', async () => {
    const configId = await createConfig(s.t, s.admin);
    let calls = 0;
    s.partner.handle((_req, res) => {
      calls += 1;
      res.writeHead(calls === 1 ? 503 : 200, { 'content-type': 'application/json' });
      res.end('{}');
    });
    const workflowId = await createSteps(
      s.t,
      s.admin,
      [{ name: 'tell', type: 'api', config: { url: s.partner.url('/hook') } }],
      { config: { retry: { enabled: true, maxAttempts: 3, backoff: 'fixed', delayMs: 300 } } },
    );
    const queued = await executeAsync(s.t, s.user.token, workflowId, configId, { name: 'Ann' });
    const waiting = await waitForRun(
      s.t,
      s.user.token,
      queued.json().runId,
      (r) => r.status === 'queued' && calls === 1,
    );
    expect(waiting.status).toBe('queued');
    const run = await waitForRun(s.t, s.user.token, queued.json().runId);
    expect(run.status).toBe('success');
    expect(run.steps[0]).toMatchObject({ status: 'success', attempts: 2 });
    expect(run.steps[0].attemptLog.map((a: any) => [a.status, a.delayMs])).toEqual([
      ['failed', 0],
      ['success', 300],
    ]);
  });

  it('cancel: a running run waiting out a retry delay stops waiting and ends cancelled', async () => {
    const configId = await createConfig(s.t, s.admin);
    s.partner.handle((_req, res) => {
      res.writeHead(503);
      res.end();
    });
    const workflowId = await createSteps(
      s.t,
      s.admin,
      [{ name: 'tell', type: 'api', config: { url: s.partner.url('/hook') } }],
      { config: { retry: { enabled: true, maxAttempts: 5, backoff: 'fixed', delayMs: 20_000 } } },
    );
    const pending = execute(s.t, s.user.token, workflowId, configId, { name: 'Ann' });
    const runId = await callingRun(workflowId);
    const cancelled = await cancel(runId);
    expect(cancelled.statusCode).toBe(200);
    expect(cancelled.json()).toMatchObject({ id: runId, status: 'running' });
    const result = (await pending).json();
    expect(result).toMatchObject({ success: false, status: 'cancelled', message: 'Workflow cancelled' });
    expect(s.partner.requests).toHaveLength(1);
    const again = await cancel(runId);
    expect(again.statusCode).toBe(409);
    expect(again.json().code).toBe('WORKFLOW_RUN_FINISHED');
  });

  it('cancel: a run inside its request stops before its next step with an effect once the step in flight ends', async () => {
    const configId = await createConfig(s.t, s.admin);
    let answer: () => void = () => undefined;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    s.partner.handle((_req, res) => {
      void answered.then(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{}');
      });
    });
    const workflowId = await createSteps(s.t, s.admin, [
      { name: 'tell', type: 'api', config: { url: s.partner.url('/hook'), method: 'POST' } },
      { name: 'shape', type: 'transform', config: { mapping: { who: 'name' } } },
      { name: 'store', type: 'save' },
    ]);
    const pending = execute(s.t, s.user.token, workflowId, configId, { name: 'Ann', qty: 1 });
    const runId = await callingRun(workflowId);
    const cancelled = await cancel(runId);
    expect(cancelled.json()).toMatchObject({ id: runId, status: 'running' });
    answer();
    const result = (await pending).json();
    expect(result).toMatchObject({ status: 'cancelled', runId });
    expect(result.steps.map((step: any) => [step.name, step.status])).toEqual([
      ['tell', 'success'],
      ['shape', 'success'],
    ]);
    expect((await activeRecords(s.t, s.admin, configId)).total).toBe(0);
  });

  it('cancel: a run inside its request cancelled during a replayable step does not start the next one', async () => {
    const configId = await createConfig(s.t, s.admin);
    const workflowId = await createSteps(s.t, s.admin, [
      { name: 'wait', type: 'gate', config: { gate: 'durable-cancel' } },
      { name: 'store', type: 'save' },
    ]);
    const pending = execute(s.t, s.user.token, workflowId, configId, { name: 'Ann', qty: 1 });
    while (!GateStep.isWaiting('durable-cancel')) await new Promise((resolve) => setTimeout(resolve, 20));
    const runId = (await runsOf(workflowId)).data[0].id;
    expect((await cancel(runId)).json()).toMatchObject({ id: runId, status: 'running' });
    GateStep.open('durable-cancel');
    const result = (await pending).json();
    expect(result).toMatchObject({ status: 'cancelled', runId });
    expect(result.steps.map((step: any) => [step.name, step.status])).toEqual([['wait', 'success']]);
    expect((await activeRecords(s.t, s.admin, configId)).total).toBe(0);
  });

  it("another user's run cannot be cancelled (404)", async () => {
    const configId = await createConfig(s.t, s.admin);
    const workflowId = await createSteps(s.t, s.admin, [
      { name: 'shape', type: 'transform', config: { mapping: { a: 'name' } } },
    ]);
    const queued = await executeAsync(s.t, s.admin, workflowId, configId, { name: 'Ann' });
    const response = await cancel(queued.json().runId);
    expect(response.statusCode).toBe(404);
    expect(response.json().code).toBe('WORKFLOW_RUN_NOT_FOUND');
  });

  it('dry run: validate, transform and conditional run; save, notify and api are only rendered; nothing is stored', async () => {
    const configId = await createConfig(s.t, s.admin);
    const workflowId = await createSteps(s.t, s.admin, [
      { name: 'check', type: 'validate' },
      { name: 'shape', type: 'transform', config: { mapping: { who: 'name' } } },
      { name: 'big', type: 'conditional', config: { condition: { '>': [{ var: 'input.qty' }, 1] } } },
      { name: 'store', type: 'save', config: { source: 'results.shape' } },
      {
        name: 'tell',
        type: 'api',
        config: { url: s.partner.url('/hook'), method: 'POST', payload: { who: '{{results.shape.who}}' } },
      },
      {
        name: 'mail',
        type: 'notify',
        config: { email: { to: 'a@example.com', subject: 'Order of {{input.name}}' } },
      },
    ]);
    const response = await s.t.request({
      method: 'POST',
      url: `/api/workflow/${workflowId}/execute?dryRun=true`,
      token: s.user.token,
      payload: { configId, data: { name: 'Ann', qty: 2 } },
    });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({
      success: true,
      steps: [
        { name: 'check', status: 'success', result: { valid: true } },
        { name: 'shape', status: 'success', result: { who: 'Ann' } },
        { name: 'big', status: 'success', result: { matched: true } },
        {
          name: 'store',
          status: 'success',
          result: { dryRun: true, wouldRun: { type: 'save', config: { source: 'results.shape' } } },
        },
        {
          name: 'tell',
          result: { dryRun: true, wouldRun: { config: { method: 'POST', payload: { who: 'Ann' } } } },
        },
        {
          name: 'mail',
          result: { dryRun: true, wouldRun: { config: { email: { subject: 'Order of Ann' } } } },
        },
      ],
    });
    expect(s.partner.requests).toHaveLength(0);
    expect((await activeRecords(s.t, s.admin, configId)).total).toBe(0);
    expect((await runsOf(workflowId, '', s.admin)).totalCount).toBe(0);
  });

  it('two instances on one database drain 200 queued runs, none run twice', async () => {
    const second = await createTestApp({
      database: s.t.database,
      env: { WORKFLOW_API_ALLOWED_HOSTS: `127.0.0.1:${s.partner.port}`, WORKFLOW_POLL_MS: '50' },
    });
    try {
      const configId = await createConfig(s.t, s.admin, { preferences: { saveLimit: null } });
      const workflowId = await createSteps(s.t, s.admin, saveThenPost(s.partner.url('/hook')));
      const runIds: string[] = [];
      for (let i = 0; i < 200; i++) {
        const app = i % 2 === 0 ? s.t : second;
        const queued = await executeAsync(app, s.admin, workflowId, configId, { name: `n${i}`, qty: 1 });
        runIds.push(queued.json().runId);
      }
      const deadline = Date.now() + 60_000;
      for (;;) {
        const pages = [
          await runsOf(workflowId, '?limit=100', s.admin),
          await runsOf(workflowId, '?limit=100&page=2', s.admin),
        ];
        const runs = pages.flatMap((page) => page.data);
        if (runs.length === 200 && runs.every(finished)) {
          expect(runs.every((run: any) => run.status === 'success')).toBe(true);
          break;
        }
        if (Date.now() > deadline) throw new Error('the queue was not drained');
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(s.partner.requests).toHaveLength(200);
      const ids = s.partner.requests.map((request) => JSON.parse(request.body).id);
      expect(new Set(ids).size).toBe(200);
      expect((await activeRecords(s.t, s.admin, configId)).total).toBe(200);
    } finally {
      await second.close();
    }
  }, 90_000);
});
