import { createUser } from '../../factories/user.factory';
import { type HttpTestServer } from '../../utils/http-test-server';
import { useAppSuite, WORKFLOW_SUITE } from '../../utils/app-suite';
import {
  activeRecords,
  createSteps,
  executeAsync,
  getRun,
  run,
  saveThenPost,
  waitForRun,
} from '../../utils/workflow-api';
import { untilTrue } from '../../utils/until';
import { GateStep, GateStepModule } from '../../utils/workflow-gate-step';

/** The receiver answers 500 to the first `failures` calls, then 200. */
function failFirst(receiver: HttpTestServer, failures: number): void {
  let calls = 0;
  receiver.handle((_req, res) => {
    calls += 1;
    res.writeHead(calls <= failures ? 500 : 200, { 'content-type': 'application/json' });
    res.end('{"ok":true}');
  });
}

describe('re-running a finished run (POST /api/workflow/runs/:runId/rerun)', () => {
  const s = useAppSuite({ ...WORKFLOW_SUITE, modules: [GateStepModule] });

  const rerun = (runId: string, body: Record<string, unknown>, headers?: Record<string, string>) =>
    s.t.request({
      method: 'POST',
      url: `/api/workflow/runs/${runId}/rerun`,
      token: s.user.token,
      payload: body,
      headers,
    });
  const runOf = (runId: string) => getRun(s.t, s.user.token, runId);

  /** save, then a call that fails the first time: a failed run with one record. */
  async function failedRun(): Promise<{ workflowId: string; failed: any }> {
    const workflowId = await createSteps(s.t, s.admin, saveThenPost(s.partner.url('/hook')));
    failFirst(s.partner, 1);
    const failed = await run(s.t, s.user.token, workflowId, s.configId, { name: 'Ann', qty: 2 });
    expect(failed).toMatchObject({
      status: 'failed',
      steps: [{ name: 'store' }, { name: 'tell', status: 'failed' }],
    });
    expect((await activeRecords(s.t, s.admin, s.configId)).total).toBe(1);
    return { workflowId, failed };
  }

  it('from the failed step: the save before it is taken over (no second record), its result reused', async () => {
    const { failed } = await failedRun();
    const response = await rerun(failed.runId, { from: 'failed' });
    expect(response.statusCode).toBe(200);
    const again = response.json();
    expect(again).toMatchObject({
      status: 'success',
      runId: expect.any(String),
      steps: [
        { name: 'store', status: 'success', reused: true },
        { name: 'tell', status: 'success', attempts: 1 },
      ],
      results: { store: failed.results.store },
      data: { _id: failed.data._id },
    });
    expect(again.runId).not.toBe(failed.runId);
    expect(again.steps[1].reused).toBeUndefined();
    expect((await activeRecords(s.t, s.admin, s.configId)).total).toBe(1);
    // The call after the point ran with the record the first run saved.
    expect(JSON.parse(s.partner.requests.at(-1)!.body)).toEqual({ id: failed.data._id });
    expect(await runOf(again.runId)).toMatchObject({
      rerunOf: failed.runId,
      definitionVersion: 1,
      dataId: failed.data._id,
      status: 'success',
    });
  });

  it('a retried re-run with the same Idempotency-Key answers the first re-run: one new run, no second call', async () => {
    const { failed } = await failedRun();
    const key = { 'idempotency-key': 'rerun-1' };
    const first = await rerun(failed.runId, { from: 'failed' }, key);
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({ status: 'success', runId: expect.any(String) });
    const calls = s.partner.requests.length;
    const again = await rerun(failed.runId, { from: 'failed' }, key);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual(first.json());
    expect(s.partner.requests.length).toBe(calls);
  });

  it('from a named step and from the start: only the steps from the point run again', async () => {
    const { failed } = await failedRun();
    const fromTell = (await rerun(failed.runId, { from: 'tell' })).json();
    expect(fromTell).toMatchObject({ status: 'success', steps: [{ reused: true }, { name: 'tell' }] });
    expect((await activeRecords(s.t, s.admin, s.configId)).total).toBe(1);
    const fromStart = (await rerun(failed.runId, { from: 'start' })).json();
    expect(fromStart.status).toBe('success');
    expect(fromStart.steps.map((step: any) => step.reused)).toEqual([undefined, undefined]);
    expect(fromStart.data._id).not.toBe(failed.data._id);
    expect((await activeRecords(s.t, s.admin, s.configId)).total).toBe(2);
  });

  it('the original definition or the current one; versions rise at every update', async () => {
    const { workflowId, failed } = await failedRun();
    const updated = await s.t.request({
      method: 'PUT',
      url: `/api/workflow/${workflowId}`,
      token: s.admin,
      payload: {
        config: {
          steps: [
            { name: 'store', type: 'save' },
            { name: 'shape', type: 'transform', config: { mapping: { who: 'name' } } },
            { name: 'tell', type: 'api', config: { url: s.partner.url('/v2'), method: 'POST', payload: {} } },
          ],
        },
      },
    });
    expect(updated.json().version).toBe(2);
    const original = (await rerun(failed.runId, { from: 'failed', definition: 'original' })).json();
    expect(original.steps.map((step: any) => step.name)).toEqual(['store', 'tell']);
    expect(s.partner.requests.at(-1)!.url).toBe('/hook');
    expect((await runOf(original.runId)).definitionVersion).toBe(1);
    const current = (await rerun(failed.runId, { from: 'shape', definition: 'current' })).json();
    expect(current).toMatchObject({
      status: 'success',
      steps: [
        { name: 'store', reused: true },
        { name: 'shape', status: 'success' },
        { name: 'tell', status: 'success' },
      ],
    });
    expect(s.partner.requests.at(-1)!.url).toBe('/v2');
    expect((await runOf(current.runId)).definitionVersion).toBe(2);
    // `shape` is new: the first run never ran it, so a re-run cannot start after it.
    const after = await rerun(failed.runId, { from: 'tell', definition: 'current' });
    expect(after.statusCode).toBe(422);
    expect(after.json()).toMatchObject({ code: 'WORKFLOW_RERUN_STEP_NOT_REUSABLE' });
    expect((await activeRecords(s.t, s.admin, s.configId)).total).toBe(1);
  });

  it('queued with Prefer: respond-async; the queue runs it from its point', async () => {
    const { failed } = await failedRun();
    const queued = await rerun(failed.runId, { from: 'failed' }, { prefer: 'respond-async' });
    expect(queued.statusCode).toBe(202);
    expect(queued.headers.location).toBe(`/api/workflow/runs/${queued.json().runId}`);
    const done = await waitForRun(s.t, s.user.token, queued.json().runId);
    expect(done).toMatchObject({ status: 'success', rerunOf: failed.runId, dataId: failed.data._id });
    expect((await activeRecords(s.t, s.admin, s.configId)).total).toBe(1);
  });

  it('refuses: a run still running (409), no failed step (409), an unknown step (422), someone else’s run (404)', async () => {
    const workflowId = await createSteps(s.t, s.admin, [
      { name: 'hold', type: 'gate', config: { gate: 'rerun' } },
    ]);
    const queued = await executeAsync(s.t, s.user.token, workflowId, s.configId, { name: 'Ann', qty: 1 });
    const runId = queued.json().runId;
    await untilTrue(() => GateStep.isWaiting('rerun'), 'the run at its gate');
    const running = await rerun(runId, { from: 'start' });
    expect(running.statusCode).toBe(409);
    expect(running.json()).toMatchObject({ code: 'WORKFLOW_RUN_NOT_FINISHED' });
    GateStep.open('rerun');
    await waitForRun(s.t, s.user.token, runId, (r) => r.status === 'success');

    const noFailure = await rerun(runId, { from: 'failed' });
    expect(noFailure.statusCode).toBe(409);
    expect(noFailure.json()).toMatchObject({ code: 'WORKFLOW_RERUN_NO_FAILED_STEP' });
    const unknown = await rerun(runId, { from: 'nope' });
    expect(unknown.statusCode).toBe(422);
    expect(unknown.json()).toMatchObject({ code: 'WORKFLOW_RERUN_STEP_UNKNOWN' });
    const bad = await rerun(runId, { from: 'start', definition: 'newest' });
    expect(bad.statusCode).toBe(422);
    const other = await createUser(s.t);
    const foreign = await s.t.request({
      method: 'POST',
      url: `/api/workflow/runs/${runId}/rerun`,
      token: other.token,
      payload: { from: 'start' },
    });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toMatchObject({ code: 'WORKFLOW_RUN_NOT_FOUND' });
  });
});
