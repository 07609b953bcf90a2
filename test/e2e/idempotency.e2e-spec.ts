import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { rowsOf } from '../../src/database/raw-rows';
import { IdempotencyRetention } from '../../src/idempotency/idempotency-retention';
import { createConfig } from '../factories/config.factory';
import { postRecord } from '../utils/api-requests';
import { createUser } from '../factories/user.factory';
import { errorBody } from '../utils/api-error';
import { useAppSuite } from '../utils/app-suite';
import { activeRecords, createSteps } from '../utils/workflow-api';
import { createSite } from '../factories/site.factory';

describe('Idempotency-Key on record creation and workflow execution', () => {
  const s = useAppSuite({ users: 1 });

  const create = (configId: string, key: string, payload: Record<string, unknown>, token = s.user.token) =>
    postRecord(s.t, token, configId, payload, { 'idempotency-key': key });

  const executeWith = (
    workflowId: string,
    configId: string,
    key: string,
    options: { url?: string; headers?: Record<string, string> } = {},
  ) =>
    s.t.request({
      method: 'POST',
      url: options.url ?? `/api/workflow/${workflowId}/execute`,
      token: s.user.token,
      headers: { 'idempotency-key': key, ...options.headers },
      payload: { configId, data: { name: 'Ann', qty: 1 } },
    });

  it('ten identical concurrent requests with one key store one record and answer ten equal responses', async () => {
    const configId = await createConfig(s.t, s.admin);
    const body = { name: 'Ann', qty: 2, price: 3 };
    const answers = await Promise.all(Array.from({ length: 10 }, () => create(configId, 'order-1', body)));
    expect(answers.map((answer) => answer.statusCode)).toEqual(Array(10).fill(201));
    const first = answers[0].json();
    expect(first).toMatchObject({ success: true, data: { data: body } });
    for (const answer of answers) expect(answer.json()).toEqual(first);
    expect((await activeRecords(s.t, s.admin, configId)).total).toBe(1);
  });

  it('the same key with a different body is a 422 IDEMPOTENCY_KEY_REUSED; other users and keys are independent', async () => {
    const configId = await createConfig(s.t, s.admin);
    expect((await create(configId, 'k', { name: 'Ann', qty: 1 })).statusCode).toBe(201);
    const reused = await create(configId, 'k', { name: 'Bob', qty: 1 });
    expect(reused.statusCode).toBe(422);
    expect(reused.json()).toMatchObject(errorBody(422, { code: 'IDEMPOTENCY_KEY_REUSED' }));
    const other = await createUser(s.t);
    expect((await create(configId, 'k', { name: 'Bob', qty: 1 }, other.token)).statusCode).toBe(201);
    expect((await create(configId, 'k2', { name: 'Ann', qty: 1 })).statusCode).toBe(201);
    expect((await activeRecords(s.t, s.admin, configId)).total).toBe(3);
  });

  it('a failed first request frees the key; a malformed key is a 422', async () => {
    const configId = await createConfig(s.t, s.admin);
    const invalid = await create(configId, 'retry-me', { name: '', qty: 0 });
    expect(invalid.statusCode).toBe(400);
    expect((await create(configId, 'retry-me', { name: '', qty: 0 })).statusCode).toBe(400);
    const bad = await create(configId, 'x'.repeat(300), { name: 'Ann', qty: 1 });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().validationErrors[0]).toMatchObject({ field: 'Idempotency-Key' });
  });

  it('workflow execution: concurrent repeats run once and answer the same result; async repeats give the same run', async () => {
    const configId = await createConfig(s.t, s.admin);
    const workflowId = await createSteps(s.t, s.admin, [{ name: 'store', type: 'save' }]);
    const execute = (key: string, headers: Record<string, string> = {}) =>
      executeWith(workflowId, configId, key, { headers });
    const answers = await Promise.all(Array.from({ length: 5 }, () => execute('run-1')));
    expect(answers.map((answer) => answer.statusCode)).toEqual(Array(5).fill(200));
    for (const answer of answers) expect(answer.json()).toEqual(answers[0].json());
    expect(answers[0].json()).toMatchObject({ success: true, status: 'success' });
    const queued = await Promise.all([1, 2, 3].map(() => execute('run-2', { prefer: 'respond-async' })));
    expect(queued.map((answer) => answer.statusCode)).toEqual([202, 202, 202]);
    expect(new Set(queued.map((answer) => answer.json().runId)).size).toBe(1);
    expect(queued[2].headers.location).toBe(`/api/workflow/runs/${queued[0].json().runId}`);
  });

  it('the key is scoped by the query and Prefer: a dry run does not swallow the real execute under the same key', async () => {
    const configId = await createConfig(s.t, s.admin);
    const workflowId = await createSteps(s.t, s.admin, [{ name: 'store', type: 'save' }]);
    const dry = await executeWith(workflowId, configId, 'same', {
      url: `/api/workflow/${workflowId}/execute?dryRun=true`,
    });
    expect(dry.statusCode).toBe(200);
    expect(dry.json()).toMatchObject({ runId: null, steps: [{ result: { dryRun: true } }] });
    const real = await executeWith(workflowId, configId, 'same');
    expect(real.statusCode).toBe(200);
    expect(real.json()).toMatchObject({ success: true, status: 'success', runId: expect.any(String) });
    expect((await activeRecords(s.t, s.admin, configId)).total).toBe(1);
    const queued = await executeWith(workflowId, configId, 'same', { headers: { prefer: 'respond-async' } });
    expect(queued.statusCode).toBe(202);
    expect(queued.json()).toEqual({ runId: expect.any(String), status: 'queued' });
    // Each scope still answers its own first response again.
    const realAgain = await executeWith(workflowId, configId, 'same');
    expect(realAgain.json()).toEqual(real.json());
  });

  it('a long query string does not break the key (the scope is stored as a digest): one record, the same answer', async () => {
    const configId = await createConfig(s.t, s.admin);
    // Random text: PostgreSQL would compress a repeated one below the btree entry limit.
    const pad = randomBytes(3000).toString('hex');
    const long = (key: string) =>
      s.t.request({
        method: 'POST',
        url: `/api/data/${configId}?pad=${pad}`,
        token: s.user.token,
        headers: { 'idempotency-key': key },
        payload: { name: 'Ann', qty: 1 },
      });
    const first = await long('long-query');
    expect(first.statusCode).toBe(201);
    const again = await long('long-query');
    expect(again.statusCode).toBe(201);
    expect(again.json()).toEqual(first.json());
    expect((await activeRecords(s.t, s.admin, configId)).total).toBe(1);
  });

  it("the key is scoped by the site: a global user's request through site B is not answered with site A's record", async () => {
    const siteA = await createSite(s.t, s.admin, 'Alpha', 'alpha.example.com');
    const siteB = await createSite(s.t, s.admin, 'Beta', 'beta.example.com');
    // A shared form (no site) and a user without a site: both sites are open to them.
    const configId = await createConfig(s.t, s.admin);
    const through = (host: string) =>
      postRecord(
        s.t,
        s.user.token,
        configId,
        { name: 'Ann', qty: 1 },
        { 'idempotency-key': 'order-7', host },
      );
    const onA = await through('alpha.example.com');
    expect(onA.statusCode).toBe(201);
    expect(onA.json().data).toMatchObject({ siteId: siteA });
    const onB = await through('beta.example.com');
    expect(onB.statusCode).toBe(201);
    expect(onB.json().data).toMatchObject({ siteId: siteB });
    expect(onB.json().dataId).not.toBe(onA.json().dataId);
    // Within one site the key still answers the first response again.
    const againOnA = await through('alpha.example.com');
    expect(againOnA.statusCode).toBe(201);
    expect(againOnA.json()).toEqual(onA.json());
    expect((await activeRecords(s.t, s.admin, configId)).total).toBe(2);
  });

  it('expired keys are purged; live ones stay', async () => {
    const configId = await createConfig(s.t, s.admin);
    expect((await create(configId, 'old', { name: 'Ann', qty: 1 })).statusCode).toBe(201);
    expect((await create(configId, 'new', { name: 'Bob', qty: 1 })).statusCode).toBe(201);
    const db = s.t.database.client.db;
    await db.execute(
      sql`update idempotency_keys set expires_at = now() - interval '1 minute' where user_id = ${s.user.user.id} and key = 'old'`,
    );
    expect(await s.t.app.get(IdempotencyRetention).purge()).toBe(1);
    const rows = await db.execute(
      sql`select key from idempotency_keys where user_id = ${s.user.user.id} order by key`,
    );
    expect(rowsOf(rows)).toEqual([{ key: 'new' }]);
  });
});

describe('Idempotency-Key: an answer over IDEMPOTENCY_MAX_ANSWER_BYTES is not kept', () => {
  const s = useAppSuite({ env: { IDEMPOTENCY_MAX_ANSWER_BYTES: '1024' }, users: 1 });

  it('the first request answers in full; a repeat writes nothing and is a 409 IDEMPOTENCY_ANSWER_NOT_KEPT', async () => {
    const configId = await createConfig(s.t, s.admin);
    const create = (name: string, key = 'big') =>
      postRecord(s.t, s.user.token, configId, { name, qty: 1 }, { 'idempotency-key': key });
    expect((await create('Ann', 'small')).statusCode).toBe(201);
    const name = 'x'.repeat(2000);
    const first = await create(name);
    expect(first.statusCode).toBe(201);
    expect(first.json()).toMatchObject({ success: true, data: { data: { name } } });
    const repeat = await create(name);
    expect(repeat.statusCode).toBe(409);
    expect(repeat.json()).toMatchObject(
      errorBody(409, { code: 'IDEMPOTENCY_ANSWER_NOT_KEPT', details: { status: 201, maxAnswerBytes: 1024 } }),
    );
    expect((await activeRecords(s.t, s.admin, configId)).total).toBe(2);
    const db = s.t.database.client.db;
    const rows = await db.execute(
      sql`select key, state, response_body from idempotency_keys where user_id = ${s.user.user.id} order by key`,
    );
    expect(rowsOf(rows)).toEqual([
      { key: 'big', state: 'unkept', response_body: null },
      { key: 'small', state: 'done', response_body: expect.objectContaining({ success: true }) },
    ]);
  });
});
