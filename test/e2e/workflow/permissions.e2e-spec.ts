import { createConfig } from '../../factories/config.factory';
import { createUser } from '../../factories/user.factory';
import { useAppSuite } from '../../utils/app-suite';
import {
  activeRecords,
  createSteps,
  createWorkflow,
  execute,
  listRuns,
  replaceFormPermissions,
  run,
  workflowBody,
} from '../../utils/workflow-api';

const ZERO = '00000000-0000-4000-8000-000000000000';
const ORDER = { name: 'Ann', qty: 2, price: 3 };
const SAVE = [{ name: 'store', type: 'save', config: {} }];

describe('workflow execution permissions: who may run, and steps hold the caller to the API rules', () => {
  const s = useAppSuite({ users: 1, forms: 1 });

  const history = (workflowId: string) => listRuns(s.t, s.admin, workflowId);

  it('a user whose role is not in permissions.roles (nor id in permissions.users) gets 403 and no run starts', async () => {
    const managersOnly = await createWorkflow(
      s.t,
      s.admin,
      workflowBody({ permissions: { roles: ['manager'] }, config: { steps: SAVE } }),
    );
    const refused = await execute(s.t, s.user.token, managersOnly, s.configId, ORDER);
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ success: false, code: 'FORBIDDEN', statusCode: 403 });
    expect(await history(managersOnly)).toMatchObject({ totalCount: 0, data: [] });
    expect((await activeRecords(s.t, s.admin, s.configId)).total).toBe(0);

    // Named by id, the same user may run it; an admin always may.
    const byId = await createWorkflow(
      s.t,
      s.admin,
      workflowBody({ permissions: { roles: ['manager'], users: [s.user.user.id] }, config: { steps: SAVE } }),
    );
    expect((await run(s.t, s.user.token, byId, s.configId, ORDER)).success).toBe(true);
    expect((await run(s.t, s.admin, managersOnly, s.configId, ORDER)).success).toBe(true);
  });

  it('an unknown configuration or workflow is a 404 before anything runs', async () => {
    const id = await createSteps(s.t, s.admin, SAVE);
    const noConfig = await execute(s.t, s.user.token, id, ZERO, ORDER);
    expect(noConfig.statusCode).toBe(404);
    expect(noConfig.json()).toMatchObject({ success: false, code: 'CONFIG_NOT_FOUND', statusCode: 404 });
    expect(await history(id)).toMatchObject({ totalCount: 0 });

    const noWorkflow = await execute(s.t, s.user.token, ZERO, s.configId, ORDER);
    expect(noWorkflow.statusCode).toBe(404);
    expect(noWorkflow.json()).toMatchObject({ success: false, code: 'WORKFLOW_NOT_FOUND' });

    const badBody = await s.t.request({
      method: 'POST',
      url: `/api/workflow/${id}/execute`,
      token: s.user.token,
      payload: { configId: 'not-a-uuid', data: 'text' },
    });
    expect(badBody.statusCode).toBe(422);
    expect(
      badBody
        .json()
        .validationErrors.map((e: any) => e.field)
        .sort(),
    ).toEqual(['configId', 'data']);
  });

  it('without the form permission executeWorkflows the run is a 403', async () => {
    await replaceFormPermissions(s.t, s.admin, s.configId, {
      roles: { user: ['viewForm', 'createResults'] },
    });
    const id = await createSteps(s.t, s.admin, SAVE);
    const response = await execute(s.t, s.user.token, id, s.configId, ORDER);
    expect(response.statusCode).toBe(403);
    expect(response.json()).toMatchObject({ success: false, code: 'FORBIDDEN' });
    expect(await history(id)).toMatchObject({ totalCount: 0 });
    expect((await activeRecords(s.t, s.admin, s.configId)).total).toBe(0);
  });

  it('a user without createResults cannot save through a workflow: the save step fails with FORBIDDEN and nothing is stored', async () => {
    await replaceFormPermissions(s.t, s.admin, s.configId, {
      roles: { user: ['viewForm', 'viewOwnResults', 'executeWorkflows'] },
    });
    const id = await createSteps(s.t, s.admin, [
      { name: 'check', type: 'validate', config: {} },
      ...SAVE,
      { name: 'after', type: 'transform', config: { mapping: { who: 'name' } } },
    ]);
    const body = await run(s.t, s.user.token, id, s.configId, ORDER);
    expect(body).toMatchObject({
      success: false,
      status: 'failed',
      data: null,
      steps: [
        { name: 'check', status: 'success' },
        { name: 'store', type: 'save', status: 'failed', result: null, error: { code: 'FORBIDDEN' } },
      ],
    });
    expect(body.steps).toHaveLength(2);
    expect(body.results).toEqual({ check: expect.objectContaining({ valid: true }) });
    expect((await activeRecords(s.t, s.admin, s.configId)).total).toBe(0);
    expect(await history(id)).toMatchObject({
      totalCount: 1,
      data: [{ id: body.runId, status: 'failed', dataId: null }],
    });
  });

  it('the save limit holds through a workflow: the second run’s save fails with DATA_SAVE_LIMIT_REACHED', async () => {
    const limited = await createConfig(s.t, s.admin, {
      preferences: { saveLimit: 1, allowEdit: false, allowDelete: true, storeComputedResults: true },
    });
    const id = await createSteps(s.t, s.admin, SAVE, {
      config: { retry: { enabled: true, maxAttempts: 3, delayMs: 0 } },
    });
    const first = await run(s.t, s.user.token, id, limited, ORDER);
    expect(first).toMatchObject({ success: true, results: { store: { dataId: expect.any(String) } } });

    const second = await run(s.t, s.user.token, id, limited, { ...ORDER, qty: 3 });
    expect(second).toMatchObject({
      success: false,
      status: 'failed',
      steps: [
        {
          name: 'store',
          status: 'failed',
          error: { code: 'DATA_SAVE_LIMIT_REACHED', details: { limit: 1 } },
        },
      ],
    });
    expect(second.steps[0].error.message).toMatch(/1/);
    // The limit is not retried even when retries are on: it is not a transient failure.
    expect(second.steps[0].attempts).toBe(1);
    const records = await activeRecords(s.t, s.admin, limited);
    expect(records.total).toBe(1);
    expect(records.data[0]._id).toBe(first.results.store.dataId);

    // The limit is per user: another user still saves once.
    const other = await createUser(s.t);
    expect((await run(s.t, other.token, id, limited, ORDER)).success).toBe(true);
  });

  it('concurrent runs cannot pass a save limit of 1 together', async () => {
    const limited = await createConfig(s.t, s.admin, {
      preferences: { saveLimit: 1, allowEdit: false, allowDelete: true, storeComputedResults: true },
    });
    const id = await createSteps(s.t, s.admin, SAVE);
    const bodies = await Promise.all(
      [1, 2, 3, 4].map((qty) => run(s.t, s.user.token, id, limited, { ...ORDER, qty })),
    );
    expect(bodies.filter((b) => b.success)).toHaveLength(1);
    for (const failed of bodies.filter((b) => !b.success))
      expect(failed.steps[0].error.code).toBe('DATA_SAVE_LIMIT_REACHED');
    expect((await activeRecords(s.t, s.admin, limited)).total).toBe(1);
  });

  it('a save step writes the record as the caller: owner and computed results as POST /api/data would', async () => {
    const id = await createSteps(s.t, s.admin, SAVE);
    const body = await run(s.t, s.user.token, id, s.configId, ORDER);
    const record = await s.t.request({
      method: 'GET',
      url: `/api/data/${s.configId}/${body.results.store.dataId}`,
      token: s.user.token,
    });
    expect(record.statusCode).toBe(200);
    expect(record.json()).toMatchObject({
      configId: s.configId,
      userId: s.user.user.id,
      data: ORDER,
      computedResults: { total: 6, bigOrder: false },
      isActive: true,
    });
    // The owner may delete it like any own record.
    const deleted = await s.t.request({
      method: 'DELETE',
      url: `/api/data/${s.configId}/${body.results.store.dataId}`,
      token: s.user.token,
    });
    expect(deleted.statusCode).toBe(200);
  });
});
