import { useAppSuite } from '../../utils/app-suite';
import { createSteps, listRuns, run } from '../../utils/workflow-api';

const ZERO = '00000000-0000-4000-8000-000000000000';

describe('workflow run history: paged, newest first, each user sees their own runs', () => {
  let workflowId: string;
  const s = useAppSuite({ users: 2, forms: 1 });
  beforeEach(async () => {
    workflowId = await createSteps(s.t, s.admin, [
      { name: 'store', type: 'save', config: {} },
      { name: 'shape', type: 'transform', config: { mapping: { who: 'name' } } },
    ]);
  });

  const history = (token: string, query = '') => listRuns(s.t, token, workflowId, query);
  const getRun = (token: string, runId: string) =>
    s.t.request({ method: 'GET', url: `/api/workflow/runs/${runId}`, token });

  it('lists a workflow’s runs newest first with page, limit, totalCount and pages', async () => {
    const runIds: string[] = [];
    for (const qty of [1, 2, 3])
      runIds.push((await run(s.t, s.user.token, workflowId, s.configId, { name: 'Ann', qty })).runId);
    const newestFirst = [...runIds].reverse();

    const all = await history(s.user.token);
    expect(all).toMatchObject({ totalCount: 3, page: 1, pages: 1 });
    expect(all.data.map((r: any) => r.id)).toEqual(newestFirst);
    expect(all.data[0]).toEqual({
      id: runIds[2],
      workflowId,
      userId: s.user.user.id,
      configId: s.configId,
      dataId: expect.any(String),
      dataCompensated: false,
      status: 'success',
      message: 'Workflow completed',
      steps: [
        expect.objectContaining({ name: 'store', status: 'success', attempts: 1 }),
        expect.objectContaining({ name: 'shape', status: 'success', result: { who: 'Ann' } }),
      ],
      durationMs: expect.any(Number),
      startedAt: expect.any(String),
      finishedAt: expect.any(String),
      definitionVersion: 1,
      rerunOf: null,
      trigger: null,
      waitingFor: null,
      effects: [],
    });

    const first = await history(s.user.token, '?page=1&limit=2');
    expect(first).toMatchObject({ totalCount: 3, page: 1, pages: 2 });
    expect(first.data.map((r: any) => r.id)).toEqual(newestFirst.slice(0, 2));
    const second = await history(s.user.token, '?page=2&limit=2');
    expect(second).toMatchObject({ totalCount: 3, page: 2, pages: 2 });
    expect(second.data.map((r: any) => r.id)).toEqual(newestFirst.slice(2));
    // A parameter given twice counts with its last value, as in the record lists.
    expect(await history(s.user.token, '?page=1&limit=2&page=2')).toEqual(second);
    expect(await history(s.user.token, '?page=3&limit=2')).toMatchObject({
      data: [],
      totalCount: 3,
      page: 3,
    });

    for (const query of ['?limit=0', '?limit=101', '?page=0', '?page=x', '?page=1e300', '?page=10000001']) {
      const bad = await s.t.request({
        method: 'GET',
        url: `/api/workflow/${workflowId}/runs${query}`,
        token: s.admin,
      });
      expect(bad.statusCode).toBe(422);
    }
  });

  it('a user sees only their own runs; an admin sees every run', async () => {
    const mine = await run(s.t, s.user.token, workflowId, s.configId, { name: 'Ann', qty: 1 });
    const theirs = await run(s.t, s.users[1].token, workflowId, s.configId, { name: 'Bob', qty: 2 });
    const admins = await run(s.t, s.admin, workflowId, s.configId, { name: 'Root', qty: 3 });

    expect(await history(s.user.token)).toMatchObject({
      totalCount: 1,
      data: [{ id: mine.runId, userId: s.user.user.id }],
    });
    expect(await history(s.users[1].token)).toMatchObject({ totalCount: 1, data: [{ id: theirs.runId }] });
    const everything = await history(s.admin);
    expect(everything.totalCount).toBe(3);
    expect(everything.data.map((r: any) => r.id)).toEqual([admins.runId, theirs.runId, mine.runId]);
  });

  it('GET /api/workflow/runs/:runId: own run 200, another user’s run 404 WORKFLOW_RUN_NOT_FOUND, admin 200', async () => {
    const mine = await run(s.t, s.user.token, workflowId, s.configId, { name: 'Ann', qty: 1 });
    const own = await getRun(s.user.token, mine.runId);
    expect(own.statusCode).toBe(200);
    expect(own.json()).toMatchObject({
      id: mine.runId,
      workflowId,
      userId: s.user.user.id,
      status: 'success',
      dataId: mine.results.store.dataId,
    });
    // The stored step log is the one the execute response carried.
    expect(own.json().steps).toEqual(mine.steps);

    const foreign = await getRun(s.users[1].token, mine.runId);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toMatchObject({ success: false, code: 'WORKFLOW_RUN_NOT_FOUND', statusCode: 404 });
    for (const missing of [ZERO, 'not-a-uuid']) {
      const response = await getRun(s.user.token, missing);
      expect(response.statusCode).toBe(404);
      expect(response.json().code).toBe('WORKFLOW_RUN_NOT_FOUND');
    }
    const byAdmin = await getRun(s.admin, mine.runId);
    expect(byAdmin.statusCode).toBe(200);
    expect(byAdmin.json()).toEqual(own.json());
  });

  it('a run that ends before any step with an effect (an invalid submission) is stored all the same', async () => {
    const checked = await createSteps(s.t, s.admin, [
      { name: 'check', type: 'validate' },
      { name: 'store', type: 'save' },
    ]);
    const failed = await run(s.t, s.user.token, checked, s.configId, { name: 'Ann' });
    expect(failed).toMatchObject({ success: false, status: 'failed', data: null });
    const stored = await getRun(s.user.token, failed.runId);
    expect(stored.statusCode).toBe(200);
    expect(stored.json()).toMatchObject({
      id: failed.runId,
      workflowId: checked,
      userId: s.user.user.id,
      configId: s.configId,
      dataId: null,
      status: 'failed',
      finishedAt: expect.any(String),
    });
    expect(stored.json().steps).toEqual(failed.steps);
    expect(stored.json().steps.map((step: any) => [step.name, step.status])).toEqual([['check', 'failed']]);
  });

  it('runs stay readable after the workflow is deleted; its history route is a 404 then', async () => {
    const mine = await run(s.t, s.user.token, workflowId, s.configId, { name: 'Ann', qty: 1 });
    expect(
      (await s.t.request({ method: 'DELETE', url: `/api/workflow/${workflowId}`, token: s.admin }))
        .statusCode,
    ).toBe(200);
    expect((await getRun(s.user.token, mine.runId)).statusCode).toBe(200);
    const gone = await s.t.request({
      method: 'GET',
      url: `/api/workflow/${workflowId}/runs`,
      token: s.admin,
    });
    expect(gone.statusCode).toBe(404);
    expect(gone.json().code).toBe('WORKFLOW_NOT_FOUND');
  });

  it('each run is appended once to the workflow log of the record it saved', async () => {
    const first = await run(s.t, s.user.token, workflowId, s.configId, { name: 'Ann', qty: 1 });
    const second = await run(s.t, s.user.token, workflowId, s.configId, { name: 'Ann', qty: 2 });
    expect(first.results.store.dataId).not.toBe(second.results.store.dataId);
    for (const body of [first, second]) {
      const record = await s.t.request({
        method: 'GET',
        url: `/api/data/${s.configId}/${body.results.store.dataId}`,
        token: s.user.token,
      });
      expect(record.json().workflow).toEqual([
        {
          runId: body.runId,
          workflowId,
          workflowName: 'Workflow',
          status: 'success',
          at: expect.any(String),
          steps: [
            { name: 'store', type: 'save', status: 'success' },
            { name: 'shape', type: 'transform', status: 'success' },
          ],
        },
      ]);
    }
    // A record saved through the API without a workflow has an empty log.
    const plain = await s.t.request({
      method: 'POST',
      url: `/api/data/${s.configId}`,
      token: s.user.token,
      payload: { name: 'Direct', qty: 1 },
    });
    expect(plain.statusCode).toBe(201);
    const direct = await s.t.request({
      method: 'GET',
      url: `/api/data/${s.configId}/${plain.json().dataId}`,
      token: s.user.token,
    });
    expect(direct.json().workflow).toEqual([]);
  });
});
