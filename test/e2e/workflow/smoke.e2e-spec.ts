import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { StepRegistry } from '../../../src/workflow/engine/step-registry.service';
import { createConfig } from '../../factories/config.factory';
import { useAppSuite } from '../../utils/app-suite';
import { activeRecords, createWorkflow, execute, listRuns, postWorkflow } from '../../utils/workflow-api';

describe('workflow smoke', () => {
  const s = useAppSuite({ users: 1 });

  /** A new form, and a workflow of `steps` named `name` of `type` that the admin runs on it with `data`. */
  async function adminRun(
    { steps, ...definition }: { name: string; type: string; steps: unknown[] },
    data: Record<string, unknown>,
  ) {
    const configId = await createConfig(s.t, s.admin);
    const workflowId = await createWorkflow(s.t, s.admin, { ...definition, config: { steps } });
    return { configId, run: await execute(s.t, s.admin, workflowId, configId, data) };
  }

  it('validate -> save -> transform runs and is recorded', async () => {
    const configId = await createConfig(s.t, s.admin);
    const created = await postWorkflow(s.t, s.admin, {
      name: 'Order intake',
      type: 'save',
      permissions: { roles: ['user'] },
      config: {
        steps: [
          { name: 'check', type: 'validate', config: {} },
          { name: 'store', type: 'save', config: {} },
          { name: 'shape', type: 'transform', config: { mapping: { who: 'name', howMany: 'qty' } } },
          { name: 'vip', type: 'conditional', config: { condition: 'input.qty.equals.5' } },
          {
            name: 'skipped',
            type: 'transform',
            condition: 'results.vip.matched',
            config: { mapping: { a: 'name' } },
          },
        ],
      },
    });
    expect(created.statusCode).toBe(201);
    const workflowId = created.json().id;
    const run = await execute(s.t, s.user.token, workflowId, configId, { name: 'Ann', qty: 2, price: 3 });
    expect(run.statusCode).toBe(200);
    const body = run.json();
    expect(body).toMatchObject({
      success: true,
      message: 'Workflow completed',
      workflowId,
      workflowName: 'Order intake',
      steps: [
        { name: 'check', type: 'validate', status: 'success' },
        { name: 'store', type: 'save', status: 'success' },
        { name: 'shape', type: 'transform', status: 'success', result: { who: 'Ann', howMany: 2 } },
        { name: 'vip', type: 'conditional', status: 'success', result: { matched: false } },
        { name: 'skipped', type: 'transform', status: 'skipped', result: null },
      ],
      results: {
        check: { valid: true },
        store: { dataId: expect.any(String) },
        shape: { who: 'Ann', howMany: 2 },
      },
      data: { data: { name: 'Ann', qty: 2, price: 3 } },
    });
    const record = await s.t.request({
      method: 'GET',
      url: `/api/data/${configId}/${body.results.store.dataId}`,
      token: s.user.token,
    });
    expect(record.json().workflow).toEqual([
      expect.objectContaining({ runId: body.runId, status: 'success', workflowName: 'Order intake' }),
    ]);
    expect(await listRuns(s.t, s.user.token, workflowId)).toMatchObject({
      totalCount: 1,
      page: 1,
      pages: 1,
      data: [{ id: body.runId, status: 'success' }],
    });
  });

  it('a failed validate continued past leaves validationResult.valid false for later conditions', async () => {
    const { run } = await adminRun(
      {
        name: 'Triage',
        type: 'validate',
        steps: [
          { name: 'check', type: 'validate', onError: 'continue' },
          { name: 'store', type: 'save', condition: 'validationResult.valid' },
          { name: 'flag', type: 'conditional', config: { condition: '!validationResult.valid' } },
        ],
      },
      { name: 'Ann', qty: 500 },
    );
    expect(run.statusCode).toBe(200);
    expect(run.json()).toMatchObject({
      success: true,
      steps: [
        { name: 'check', status: 'failed', error: { code: 'DATA_VALIDATION_FAILED' } },
        { name: 'store', status: 'skipped' },
        { name: 'flag', status: 'success', result: { matched: true } },
      ],
      data: null,
    });
  });

  it('registers every built-in step type, each documented in the README', () => {
    const types = s.t.app.get(StepRegistry).types();
    expect(types).toEqual(['api', 'approval', 'conditional', 'notify', 'save', 'transform', 'validate']);
    const readme = readFileSync(join(__dirname, '../../../README.md'), 'utf8');
    for (const type of types) expect(readme).toContain(`\`${type}\``);
  });

  it('names the step in every 422: DTO fields and step configs alike use config.steps[i]', async () => {
    const response = await postWorkflow(s.t, s.admin, {
      name: 'Bad',
      type: 'custom',
      config: {
        steps: [
          { name: 'a', type: 'transform', onError: 'explode', config: { mapping: { ok: 'name' } } },
          { name: 'b', type: 'transform', config: { mapping: { leak: '__proto__' } } },
        ],
      },
    });
    expect(response.statusCode).toBe(422);
    expect(response.json().validationErrors).toEqual([
      expect.objectContaining({ field: 'config.steps[0].onError', rule: 'isIn' }),
    ]);
    const mapping = await postWorkflow(s.t, s.admin, {
      name: 'Bad',
      type: 'custom',
      config: { steps: [{ name: 'b', type: 'transform', config: { mapping: { leak: 'a.constructor' } } }] },
    });
    expect(mapping.statusCode).toBe(422);
    expect(mapping.json().validationErrors).toEqual([
      expect.objectContaining({ field: 'config.steps[0].config.mapping', rule: 'mapping' }),
    ]);
  });

  it('a rolled-back run answers data null and leaves no active record', async () => {
    const { configId, run } = await adminRun(
      {
        name: 'Undo',
        type: 'save',
        steps: [
          { name: 'store', type: 'save' },
          { name: 'boom', type: 'validate', onError: 'rollback', config: { source: 'results.store' } },
        ],
      },
      { name: 'Ann', qty: 2 },
    );
    expect(run.json()).toMatchObject({
      success: false,
      status: 'rolled_back',
      data: null,
      steps: [
        { name: 'store', status: 'compensated' },
        { name: 'boom', status: 'failed', error: { code: 'DATA_VALIDATION_FAILED' } },
      ],
    });
    expect((await activeRecords(s.t, s.admin, configId)).total).toBe(0);
  });
});
