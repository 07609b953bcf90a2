import { useAppSuite } from '../../utils/app-suite';
import { EchoStepModule, ShadowSaveStepModule } from '../../utils/workflow-echo-step';
import { createSteps, postWorkflow, run, workflowBody } from '../../utils/workflow-api';
import { bootError } from '../../utils/workflow-test-app';

describe('a custom step type registered from a module of its own', () => {
  const s = useAppSuite({ modules: [EchoStepModule], users: 1, forms: 1 });

  it('runs like a built-in step: rendered config, result under its name, readable by later steps', async () => {
    const id = await createSteps(s.t, s.admin, [
      { name: 'greet', type: 'echo', config: { message: 'Hello {{input.name}}', case: 'upper' } },
      { name: 'skipped', type: 'echo', condition: 'input.vip', config: { message: 'VIP' } },
      { name: 'copy', type: 'transform', config: { source: 'results.greet', mapping: { said: 'message' } } },
      { name: 'store', type: 'save', config: {} },
    ]);
    const body = await run(s.t, s.user.token, id, s.configId, { name: 'Ann', qty: 2 });
    expect(body).toMatchObject({
      success: true,
      steps: [
        { name: 'greet', type: 'echo', status: 'success', attempts: 1 },
        { name: 'skipped', type: 'echo', status: 'skipped' },
        { name: 'copy', status: 'success' },
        { name: 'store', status: 'success' },
      ],
    });
    expect(body.results.greet).toEqual({
      message: 'HELLO ANN',
      step: 'greet',
      userId: s.user.user.id,
      attempt: 1,
    });
    expect(body.results.copy).toEqual({ said: 'HELLO ANN' });
    const record = await s.t.request({
      method: 'GET',
      url: `/api/data/${s.configId}/${body.results.store.dataId}`,
      token: s.user.token,
    });
    expect(record.json().workflow[0].steps[0]).toEqual({ name: 'greet', type: 'echo', status: 'success' });
  });

  it('its config is validated against its own config class when the definition is saved (422 naming the field)', async () => {
    const saveEcho = (config: Record<string, unknown>) =>
      postWorkflow(
        s.t,
        s.admin,
        workflowBody({ config: { steps: [{ name: 'greet', type: 'echo', config }] } }),
      );
    const missing = await saveEcho({ case: 'upper' });
    expect(missing.statusCode).toBe(422);
    const fields = missing.json().validationErrors.map((e: { field: string }) => e.field);
    expect(new Set(fields)).toEqual(new Set(['config.steps[0].config.message']));
    const badEnum = await saveEcho({ message: 'x', case: 'title' });
    expect(badEnum.statusCode).toBe(422);
    expect(badEnum.json().validationErrors).toEqual([
      { field: 'config.steps[0].config.case', rule: 'isIn', message: expect.any(String) },
    ]);
    const extra = await saveEcho({ message: 'x', shell: 'rm' });
    expect(extra.statusCode).toBe(422);
    expect(extra.json().validationErrors).toEqual([
      expect.objectContaining({ field: 'config.steps[0].config.shell' }),
    ]);
  });

  it('its failure goes through the runner’s onError like any step', async () => {
    const id = await createSteps(s.t, s.admin, [
      { name: 'store', type: 'save', config: {} },
      { name: 'boom', type: 'echo', config: { message: 'fail' }, onError: 'rollback' },
    ]);
    const body = await run(s.t, s.user.token, id, s.configId, { name: 'Ann', qty: 2 });
    expect(body).toMatchObject({
      success: false,
      status: 'rolled_back',
      steps: [
        { name: 'store', status: 'compensated' },
        {
          name: 'boom',
          type: 'echo',
          status: 'failed',
          error: { code: 'ECHO_FAILED', message: 'asked to fail' },
        },
      ],
    });
  });

  it('a second provider for an existing type (save) stops the boot with an error naming the type', async () => {
    const error = await bootError([ShadowSaveStepModule]);
    expect(error).toBeInstanceOf(Error);
    expect(error!.message).toContain('"save"');
    expect(error!.message).toMatch(/registered twice/);
    expect(error!.message).toContain('ShadowSaveStep');
  });
});
