import { buildRequestContext } from '../../../src/common/context/request-context';
import { WorkflowRunner } from '../../../src/workflow/engine/workflow-runner.service';
import { operationRunId } from '../../../src/workflow/runs/operations/operation-run-id';
import { RunOperationsRepository } from '../../../src/workflow/runs/operations/run-operations.repository';
import { RunJournalRepository } from '../../../src/workflow/engine/journal/run-journal.repository';
import { useAppSuite, WORKFLOW_SUITE } from '../../utils/app-suite';
import {
  activeRecords,
  createSteps,
  executeAsync,
  getRun,
  listRuns,
  run,
  waitForRun,
} from '../../utils/workflow-api';
import { GateStep, GateStepModule } from '../../utils/workflow-gate-step';
import { sql } from 'drizzle-orm';
import { until } from '../../utils/until';

describe('bulk operations on runs: cancel and re-run by filter, progress, bounds', () => {
  const s = useAppSuite({ ...WORKFLOW_SUITE, modules: [GateStepModule] });

  const post = (url: string, payload: Record<string, unknown>, token = s.admin) =>
    s.t.request({ method: 'POST', url, token, payload });
  const operationOf = async (id: string) =>
    (await s.t.request({ method: 'GET', url: `/api/workflow/operations/${id}`, token: s.admin })).json();
  const isDone = (operation: { status: string }) => operation.status === 'done';
  /** The operation once it is done. */
  const operationDone = (id: string) => until(() => operationOf(id), isDone, `operation ${id} done`);
  const runOf = (runId: string) => getRun(s.t, s.admin, runId);
  /** A page of up to 100 of the workflow's runs, once `done` accepts it. */
  const runsUntil = (workflowId: string, done: (page: any) => boolean, what: string) =>
    until(() => listRuns(s.t, s.admin, workflowId, '?limit=100'), done, what);

  it('cancels queued and waiting runs; the operation reports its progress', async () => {
    // One run blocks in the gate; with `concurrency: 1` the asynchronous ones behind it stay queued.
    const workflowId = await createSteps(
      s.t,
      s.admin,
      [
        { name: 'hold', type: 'gate', condition: 'input.hold', config: { gate: 'bulk' } },
        { name: 'approve', type: 'approval', config: { approvers: { roles: [] } } },
      ],
      { config: { concurrency: 1 } },
    );
    const waiting = [];
    for (const name of ['w1', 'w2'])
      waiting.push((await run(s.t, s.user.token, workflowId, s.configId, { name })).runId);
    expect((await runOf(waiting[0])).status).toBe('waiting');
    const async = (data: Record<string, unknown>) =>
      executeAsync(s.t, s.user.token, workflowId, s.configId, data).then((r) => r.json().runId);
    const gated = await async({ name: 'g', hold: true });
    await until(async () => GateStep.isWaiting('bulk'), Boolean, 'the gate');
    const queued = [await async({ name: 'q1' }), await async({ name: 'q2' })];
    expect((await runOf(queued[0])).status).toBe('queued');

    const accepted = await post(`/api/workflow/${workflowId}/runs/cancel`, {
      filter: { status: ['queued', 'waiting'] },
    });
    expect(accepted.statusCode).toBe(202);
    const { operationId } = accepted.json();
    expect(accepted.headers.location).toBe(`/api/workflow/operations/${operationId}`);
    const operation = await operationDone(operationId);
    expect(operation).toEqual({
      id: operationId,
      workflowId,
      kind: 'cancel',
      status: 'done',
      matched: 4,
      done: 4,
      failed: 0,
      failures: [],
      createdAt: expect.any(String),
      finishedAt: expect.any(String),
    });
    for (const runId of queued) expect((await runOf(runId)).status).toBe('cancelled');
    // The gated run was not matched; once it moves on, the waiting ones are ended by a worker.
    GateStep.open('bulk');
    for (const runId of waiting) await waitForRun(s.t, s.admin, runId, (r) => r.status === 'cancelled');
    expect((await waitForRun(s.t, s.admin, gated, (r) => r.status === 'waiting')).status).toBe('waiting');

    // A second operation over finished runs: each one a failure with its code, the rest still handled.
    const again = await post(`/api/workflow/${workflowId}/runs/cancel`, {
      filter: { status: ['cancelled', 'waiting'] },
    });
    const second = await operationDone(again.json().operationId);
    expect(second).toMatchObject({ matched: 5, done: 5, failed: 0 });
    const finished = await post(`/api/workflow/${workflowId}/runs/cancel`, {
      filter: { status: ['success'] },
    });
    expect(await operationDone(finished.json().operationId)).toMatchObject({
      matched: 0,
      done: 0,
      failed: 0,
    });
  });

  it('re-runs failed runs from their failed step: queued as the admin, no second record, linked by rerunOf; a retried request is the same operation', async () => {
    const workflowId = await createSteps(s.t, s.admin, [
      { name: 'store', type: 'save' },
      { name: 'tell', type: 'api', config: { url: s.partner.url('/hook'), method: 'POST', payload: {} } },
    ]);
    let calls = 0;
    s.partner.handle((_req, res) => {
      calls += 1;
      res.writeHead(calls <= 3 ? 500 : 200, { 'content-type': 'application/json' });
      res.end('{}');
    });
    const failed = [];
    for (const name of ['a', 'b', 'c'])
      failed.push((await run(s.t, s.user.token, workflowId, s.configId, { name, qty: 1 })).runId);
    const ok = (await run(s.t, s.user.token, workflowId, s.configId, { name: 'd', qty: 1 })).runId;
    expect((await activeRecords(s.t, s.admin, s.configId)).total).toBe(4);

    const bulkRerun = () =>
      s.t.request({
        method: 'POST',
        url: `/api/workflow/${workflowId}/runs/rerun`,
        token: s.admin,
        headers: { 'idempotency-key': 'bulk-1' },
        payload: {
          from: 'failed',
          filter: { status: ['failed'], userId: s.user.user.id, from: '2000-01-01T00:00:00Z' },
        },
      });
    const accepted = await bulkRerun();
    expect(accepted.statusCode).toBe(202);
    // The client's retry is the same operation, not a second one re-running every run again.
    const retried = await bulkRerun();
    expect(retried.statusCode).toBe(202);
    expect(retried.json()).toEqual(accepted.json());
    expect(retried.headers.location).toBe(`/api/workflow/operations/${accepted.json().operationId}`);
    expect(await operationDone(accepted.json().operationId)).toMatchObject({
      kind: 'rerun',
      matched: 3,
      done: 3,
      failed: 0,
    });
    const page = await runsUntil(
      workflowId,
      (p) => p.data.filter((r: any) => r.rerunOf && r.status === 'success').length === 3,
      'the re-runs',
    );
    const reruns = page.data.filter((r: any) => r.rerunOf);
    expect(reruns.map((r: any) => r.rerunOf).sort()).toEqual([...failed].sort());
    expect(reruns.every((r: any) => r.steps[0].reused === true)).toBe(true);
    expect(reruns.map((r: any) => r.rerunOf)).not.toContain(ok);
    expect((await activeRecords(s.t, s.admin, s.configId)).total).toBe(4);
  });

  it('admins only (403), a missing operation is a 404, a bad filter a 422, over 1000 matched runs a 422', async () => {
    const workflowId = await createSteps(s.t, s.admin, [
      { name: 'shape', type: 'transform', config: { mapping: {} } },
    ]);
    const refused = await post(`/api/workflow/${workflowId}/runs/cancel`, {}, s.user.token);
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ code: 'FORBIDDEN' });
    const missing = await s.t.request({
      method: 'GET',
      url: '/api/workflow/operations/3fa85f64-5717-4562-b3fc-2c963f66afa6',
      token: s.admin,
    });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ code: 'WORKFLOW_OPERATION_NOT_FOUND' });
    const bad = await post(`/api/workflow/${workflowId}/runs/cancel`, {
      filter: { status: ['done'], from: 'yesterday' },
    });
    expect(bad.statusCode).toBe(422);
    expect(bad.json()).toMatchObject({ code: 'VALIDATION_FAILED' });

    const runs = s.t.app.get(RunJournalRepository);
    const finished = {
      status: 'success' as const,
      message: 'ok',
      steps: [],
      dataId: null,
      durationMs: 1,
      checkpoint: {},
    };
    for (let i = 0; i < 1001; i += 100)
      await Promise.all(
        Array.from({ length: Math.min(100, 1001 - i) }, () =>
          runs.insertFinished(
            {
              id: crypto.randomUUID(),
              workflowId,
              userId: null,
              siteId: null,
              configId: s.configId,
              request: {},
              startedAt: new Date(),
              definition: { steps: [] },
              definitionVersion: 1,
              rerunOf: null,
            },
            finished,
            {},
          ),
        ),
      );
    const tooMany = await post(`/api/workflow/${workflowId}/runs/rerun`, { from: 'start' });
    expect(tooMany.statusCode).toBe(422);
    expect(tooMany.json()).toMatchObject({ code: 'WORKFLOW_OPERATION_TOO_LARGE', details: { max: 1000 } });
  });

  it('an operation whose instance died is taken over from where its counters stand', async () => {
    const workflowId = await createSteps(s.t, s.admin, [
      { name: 'approve', type: 'approval', config: { approvers: {} } },
    ]);
    const runIds = [];
    for (const name of ['a', 'b'])
      runIds.push((await run(s.t, s.user.token, workflowId, s.configId, { name })).runId);
    const adminUser = (await s.t.request({ method: 'GET', url: '/auth/me', token: s.admin })).json();
    const operation = await s.t.app.get(RunOperationsRepository).insert(
      {
        workflowId,
        kind: 'cancel',
        request: {
          actor: { userId: adminUser.id, email: adminUser.email, role: 'admin', siteId: null },
          siteId: null,
          locale: 'en',
          requestId: 'dead',
          filter: {},
        },
        runIds,
        matched: 2,
        userId: adminUser.id,
      },
      'a-dead-instance',
      1,
    );
    expect(await operationDone(operation.id)).toMatchObject({ matched: 2, done: 2, failed: 0 });
    for (const runId of runIds) await waitForRun(s.t, s.admin, runId, (r) => r.status === 'cancelled');
  });

  it('a re-run the dead instance queued before it counted it is not queued again by the take-over', async () => {
    const workflowId = await createSteps(s.t, s.admin, [{ name: 'store', type: 'save' }]);
    const runIds = [];
    for (const name of ['a', 'b'])
      runIds.push((await run(s.t, s.user.token, workflowId, s.configId, { name, qty: 1 })).runId);
    const me = (await s.t.request({ method: 'GET', url: '/auth/me', token: s.admin })).json();
    const actor = { userId: me.id, email: me.email, role: 'admin', siteId: null };
    const request = {
      actor,
      siteId: null,
      locale: 'en',
      requestId: 'dead',
      filter: {},
      rerun: { from: 'start', definition: 'original' },
    };
    const operation = await s.t.app
      .get(RunOperationsRepository)
      .insert(
        { workflowId, kind: 'rerun', request, runIds, matched: 2, userId: me.id },
        'a-dead-instance',
        60_000,
      );
    // The dead instance queued the first re-run, then died before it counted it.
    const ctx = buildRequestContext({ user: actor, siteId: null, locale: 'en', requestId: 'dead' });
    await s.t.app
      .get(WorkflowRunner)
      .rerun(
        ctx,
        runIds[0],
        { from: 'start', definition: 'original' },
        true,
        operationRunId(operation.id, runIds[0]),
      );
    await s.t.database.client.db.execute(
      sql`update workflow_operations set lease_until = now() - interval '1 second' where id = ${operation.id}::uuid`,
    );
    expect(await operationDone(operation.id)).toMatchObject({ matched: 2, done: 2, failed: 0 });
    const page = await runsUntil(
      workflowId,
      (p) => p.data.every((r: any) => r.status === 'success'),
      'the re-runs',
    );
    expect(
      page.data
        .filter((r: any) => r.rerunOf)
        .map((r: any) => r.rerunOf)
        .sort(),
    ).toEqual([...runIds].sort());
  });
});
