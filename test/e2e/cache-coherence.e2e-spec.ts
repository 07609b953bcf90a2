import { createConfig, ORDER_FORM } from '../factories/config.factory';
import { adminToken, createUser, deactivateUser } from '../factories/user.factory';
import { requestAs } from '../utils/request-as';
import type { TestApp } from '../utils/test-app';
import { useTwoInstances } from '../utils/two-instances';
import { createWorkflow, execute, run, workflowBody } from '../utils/workflow-api';

/**
 * Two instances of the service on one database, with the defaults (CACHE_ENABLED unset, no
 * Redis): each keeps the lookups of every request in memory, and a change made through either
 * is seen by the other on its very next request.
 */
describe('two instances keep their in-process lookups coherent', () => {
  const apps = useTwoInstances({ CACHE_ENABLED: 'false', REDIS_URL: '' });
  let admin: string;
  beforeAll(async () => {
    admin = await adminToken(apps.first);
  });

  const me = (t: TestApp, token: string) => t.request({ method: 'GET', url: '/auth/me', token });
  /** The notice goes through the database; give it the few milliseconds it takes. */
  const settle = () => new Promise((resolve) => setTimeout(resolve, 100));

  it('a logout on one instance refuses the token on the other', async () => {
    const { first, second } = apps;
    const { token } = await createUser(first);
    expect((await me(second, token)).statusCode).toBe(200);
    expect((await me(second, token)).statusCode).toBe(200);
    expect((await first.request({ method: 'POST', url: '/auth/logout', token })).statusCode).toBe(200);
    await settle();
    expect((await me(second, token)).statusCode).toBe(401);
  });

  it('a user deactivated on one instance is refused by the other', async () => {
    const { first, second } = apps;
    const { user, token } = await createUser(first);
    expect((await me(second, token)).statusCode).toBe(200);
    await deactivateUser(first, admin, user.id);
    await settle();
    expect((await me(second, token)).statusCode).toBe(401);
  });

  it('a configuration changed on one instance validates by its new rules on the other', async () => {
    const { first, second } = apps;
    const configId = await createConfig(first, admin);
    const submit = (data: object) =>
      second.request({ method: 'POST', url: `/api/data/${configId}`, token: admin, payload: data });
    const valid = { name: 'Ann', qty: 2 };
    expect((await submit(valid)).statusCode).toBe(201);
    const tightened = {
      ...ORDER_FORM.schema,
      properties: { ...ORDER_FORM.schema.properties, qty: { type: 'integer', maximum: 1 } },
    };
    const update = await requestAs(first, admin, 'PUT', `/api/configs/${configId}`, { schema: tightened });
    expect(update.statusCode).toBe(200);
    await settle();
    const refused = await submit(valid);
    expect(refused.statusCode).toBe(400);
    expect(refused.json().code).toBe('DATA_VALIDATION_FAILED');
  });

  it('a configuration deleted on one instance is a 404 on the other', async () => {
    const { first, second } = apps;
    const configId = await createConfig(first, admin);
    const records = () => requestAs(second, admin, 'GET', `/api/data/${configId}`);
    expect((await records()).statusCode).toBe(200);
    const removed = await requestAs(first, admin, 'DELETE', `/api/configs/${configId}`);
    expect(removed.statusCode).toBe(200);
    await settle();
    const after = await records();
    expect(after.statusCode).toBe(404);
    expect(after.json().code).toBe('CONFIG_NOT_FOUND');
  });

  it('a workflow changed on one instance runs its new definition on the other, and a deleted one is a 404 there', async () => {
    const { first, second } = apps;
    const configId = await createConfig(first, admin);
    const workflowId = await createWorkflow(first, admin, workflowBody());
    const before = await run(second, admin, workflowId, configId, { name: 'Ann' });
    expect(before.results.shape).toEqual({ who: 'Ann' });
    const url = `/api/workflow/${workflowId}`;
    const changed = await requestAs(first, admin, 'PUT', url, {
      config: { steps: [{ name: 'shape', type: 'transform', config: { mapping: { person: 'name' } } }] },
    });
    expect(changed.statusCode).toBe(200);
    await settle();
    const after = await run(second, admin, workflowId, configId, { name: 'Ann' });
    expect(after.results.shape).toEqual({ person: 'Ann' });
    const removed = await requestAs(first, admin, 'DELETE', url);
    expect(removed.statusCode).toBe(200);
    await settle();
    const gone = await execute(second, admin, workflowId, configId, { name: 'Ann' });
    expect(gone.statusCode).toBe(404);
    expect(gone.json().code).toBe('WORKFLOW_NOT_FOUND');
  });
});
