import { createConfig } from '../factories/config.factory';
import { adminToken, createUser, type TestUser } from '../factories/user.factory';
import { createTestApp, type TestApp } from '../utils/test-app';
import { activeRecords, createSteps } from '../utils/workflow-api';

describe('Idempotency-Key on record creation and workflow execution', () => {
  let t: TestApp;
  let admin: string;
  let user: TestUser;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await t.reset();
    admin = await adminToken(t);
    user = await createUser(t);
  });

  const create = (configId: string, key: string, payload: Record<string, unknown>, token = user.token) =>
    t.request({
      method: 'POST',
      url: `/api/data/${configId}`,
      token,
      headers: { 'idempotency-key': key },
      payload,
    });

  it('ten identical concurrent requests with one key store one record and answer ten equal responses', async () => {
    const configId = await createConfig(t, admin);
    const body = { name: 'Ann', qty: 2, price: 3 };
    const answers = await Promise.all(Array.from({ length: 10 }, () => create(configId, 'order-1', body)));
    expect(answers.map((answer) => answer.statusCode)).toEqual(Array(10).fill(201));
    const first = answers[0].json();
    expect(first).toMatchObject({ success: true, data: { data: body } });
    for (const answer of answers) expect(answer.json()).toEqual(first);
    expect((await activeRecords(t, admin, configId)).total).toBe(1);
  });

  it('the same key with a different body is a 422 IDEMPOTENCY_KEY_REUSED; other users and keys are independent', async () => {
    const configId = await createConfig(t, admin);
    expect((await create(configId, 'k', { name: 'Ann', qty: 1 })).statusCode).toBe(201);
    const reused = await create(configId, 'k', { name: 'Bob', qty: 1 });
    expect(reused.statusCode).toBe(422);
    expect(reused.json()).toMatchObject({ success: false, code: 'IDEMPOTENCY_KEY_REUSED', statusCode: 422 });
    const other = await createUser(t);
    expect((await create(configId, 'k', { name: 'Bob', qty: 1 }, other.token)).statusCode).toBe(201);
    expect((await create(configId, 'k2', { name: 'Ann', qty: 1 })).statusCode).toBe(201);
    expect((await activeRecords(t, admin, configId)).total).toBe(3);
  });

  it('a failed first request frees the key; a malformed key is a 422', async () => {
    const configId = await createConfig(t, admin);
    const invalid = await create(configId, 'retry-me', { name: '', qty: 0 });
    expect(invalid.statusCode).toBe(400);
    expect((await create(configId, 'retry-me', { name: '', qty: 0 })).statusCode).toBe(400);
    const bad = await create(configId, 'x'.repeat(300), { name: 'Ann', qty: 1 });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().validationErrors[0]).toMatchObject({ field: 'Idempotency-Key' });
  });

  it('workflow execution: concurrent repeats run once and answer the same result; async repeats give the same run', async () => {
    const configId = await createConfig(t, admin);
    const workflowId = await createSteps(t, admin, [{ name: 'store', type: 'save' }]);
    const execute = (key: string, headers: Record<string, string> = {}) =>
      t.request({
        method: 'POST',
        url: `/api/workflow/${workflowId}/execute`,
        token: user.token,
        headers: { 'idempotency-key': key, ...headers },
        payload: { configId, data: { name: 'Ann', qty: 1 } },
      });
    const answers = await Promise.all(Array.from({ length: 5 }, () => execute('run-1')));
    expect(answers.map((answer) => answer.statusCode)).toEqual(Array(5).fill(200));
    for (const answer of answers) expect(answer.json()).toEqual(answers[0].json());
    expect(answers[0].json()).toMatchObject({ success: true, status: 'success' });
    const queued = await Promise.all([1, 2, 3].map(() => execute('run-2', { prefer: 'respond-async' })));
    expect(queued.map((answer) => answer.statusCode)).toEqual([202, 202, 202]);
    expect(new Set(queued.map((answer) => answer.json().runId)).size).toBe(1);
    expect(queued[2].headers.location).toBe(`/api/workflow/runs/${queued[0].json().runId}`);
  });
});
