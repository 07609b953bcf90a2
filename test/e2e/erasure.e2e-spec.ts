import { sql } from 'drizzle-orm';
import { rowsOf } from '../../src/database/raw-rows';
import { ErasureProcessor } from '../../src/erasure/erasure.processor';
import { ERASURE_STEPS } from '../../src/erasure/erasure-steps';
import { createRecord, updateRecord } from '../factories/record.factory';
import { type TestUser } from '../factories/user.factory';
import { useAppSuite } from '../utils/app-suite';
import { createWebhook, webhookDeliveries } from '../utils/webhooks-api';
import { createSteps, getRun, run } from '../utils/workflow-api';
import { until } from '../utils/until';

const SSN = '078-05-1120';

/**
 * Erasure (README "Erasure"): a person's records purged past the trash, their history's values
 * dropped (the entries stay, marked erased), their runs scrubbed, webhook deliveries, outbox mail
 * and idempotent answers about them gone, the account anonymized; an audit entry without the
 * values; idempotent, and resumed by another instance after a crash.
 */
describe('erasure of a person and of a data subject', () => {
  // Nothing sends webhooks (they stay pending) and SMTP refuses (mail stays in the outbox).
  const s = useAppSuite({
    smtp: true,
    env: { WEBHOOK_WORKERS: '0', OUTBOX_RETRY_BASE_MS: '60000' },
    users: 2,
    forms: 1,
  });
  let adminId: string;
  beforeEach(async () => {
    await s.smtp.behave('refuse');
    adminId = (await s.t.request({ method: 'GET', url: '/auth/me', token: s.admin })).json().id;
  });

  const submit = async (user: TestUser, data: Record<string, unknown>, headers?: Record<string, string>) =>
    (await createRecord(s.t, user.token, s.configId, data, headers)).dataId;
  const eraseUser = (token: string, userId: string) =>
    s.t.request({ method: 'POST', url: `/api/users/${userId}/erase`, token });
  const eraseValue = (token: string, body: object, config = s.configId) =>
    s.t.request({ method: 'POST', url: `/api/data/${config}/erase`, token, payload: body });
  const erasure = async (id: string) =>
    (await s.t.request({ method: 'GET', url: `/api/erasures/${id}`, token: s.admin })).json();
  const runOf = (runId: string) => getRun(s.t, s.admin, runId);
  const done = (id: string) =>
    until(
      () => erasure(id),
      (e) => e.status === 'done',
      `erasure ${id}`,
    );
  const query = async (statement: ReturnType<typeof sql>) =>
    rowsOf(await s.t.database.client.db.execute(statement));
  /** Every table of the database whose rows, as text, still hold `text` (the proof of absence). */
  const tablesHolding = async (text: string) => {
    const tables = await query(
      sql`select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`,
    );
    const holding: string[] = [];
    for (const { table_name } of tables) {
      const name = String(table_name);
      const [row] = await query(
        sql`select count(*)::int as n from ${sql.identifier(name)} t where strpos(t::text, ${text}) > 0`,
      );
      if (Number(row.n) > 0) holding.push(name);
    }
    return holding.sort();
  };

  it('erases every place holding a user’s data, keeps the history entries marked erased, and writes the audit entry', async () => {
    const { t, admin, configId } = s;
    const [alice, bob] = s.users;
    const { id: webhookId } = await createWebhook(t, admin, {
      url: 'https://receiver.example.com/hook',
      events: ['record.created', 'record.updated'],
    });

    // A record with an SSN, sent with an Idempotency-Key (its answer is kept), then the SSN removed.
    const recordId = await submit(
      alice,
      { name: 'Alice', qty: 1, ssn: SSN },
      { 'idempotency-key': 'alice-1' },
    );
    await updateRecord(t, alice.token, configId, recordId, { name: 'Alice', qty: 2 });
    // A run of hers with the SSN in its input, saving a second record.
    const saveWorkflow = await createSteps(t, admin, [
      { name: 'store', type: 'save' },
      { name: 'shape', type: 'transform', config: { mapping: { copy: 'ssn' } } },
    ]);
    const aliceRun = await run(t, alice.token, saveWorkflow, configId, { name: 'Alice', qty: 3, ssn: SSN });
    expect(aliceRun).toMatchObject({ success: true });
    // Bob's run mails her; SMTP refuses, so the mail waits in the outbox.
    const mailWorkflow = await createSteps(t, admin, [
      {
        name: 'mail',
        type: 'notify',
        config: { email: { to: alice.user.email, subject: 'About {{input.name}}' } },
      },
    ]);
    const bobRun = await run(t, bob.token, mailWorkflow, configId, { name: 'Bob', qty: 1 });
    const bobRecord = await submit(bob, { name: 'Bob', qty: 1, ssn: '111-22-3333' });
    await until(
      () => runOf(bobRun.runId),
      (r) => r.effects?.[0]?.state === 'pending' && r.effects[0].attempts > 0,
      'mail pending',
    );
    const deliveries = () => webhookDeliveries(t, admin, webhookId, '?limit=100');
    await until(deliveries, (page) => page.total === 4, 'four pending deliveries');
    expect(await tablesHolding(SSN)).toEqual(
      expect.arrayContaining([
        'data_records',
        'record_history',
        'workflow_runs',
        'webhook_deliveries',
        'idempotency_keys',
      ]),
    );

    // Not an admin: 403, nothing erased.
    const refused = await eraseUser(bob.token, alice.user.id);
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ code: 'FORBIDDEN' });

    const accepted = await eraseUser(admin, alice.user.id);
    expect(accepted.statusCode).toBe(202);
    const erasureId = accepted.json().id;
    expect(accepted.headers.location).toBe(`/api/erasures/${erasureId}`);
    expect(accepted.json()).toMatchObject({
      kind: 'user',
      subject: { userId: alice.user.id },
      matched: { records: 2, runs: 1 },
      requestedBy: adminId,
    });
    const finished = await done(erasureId);
    expect(finished).toEqual({
      id: erasureId,
      kind: 'user',
      subject: { userId: alice.user.id },
      status: 'done',
      matched: { records: 2, runs: 1 },
      stepsDone: [
        'records',
        'events',
        'history',
        'webhooks',
        'runs',
        'mail',
        'idempotency',
        'imports',
        'account',
      ],
      counts: {
        records: 2,
        pendingEvents: 0,
        historyEntries: 3,
        webhookDeliveries: 3,
        runs: 1,
        runEffects: 0,
        outboxMail: 1,
        idempotentAnswers: 1,
        importRequests: 0,
        accounts: 1,
      },
      requestedBy: adminId,
      createdAt: expect.any(String),
      finishedAt: expect.any(String),
    });

    // Through the API: the records are gone (not in the trash either); the history entries stay, without values.
    expect(
      (await t.request({ method: 'GET', url: `/api/data/${configId}/${recordId}`, token: admin })).statusCode,
    ).toBe(404);
    const trash = await t.request({ method: 'GET', url: `/api/data/${configId}?deleted=true`, token: admin });
    expect(trash.json()).toMatchObject({ total: 0 });
    const history = await t.request({
      method: 'GET',
      url: `/api/data/${configId}/${recordId}/history`,
      token: admin,
    });
    expect(history.statusCode).toBe(200);
    expect(history.json()).toMatchObject({
      total: 2,
      data: [
        { action: 'updated', changes: { qty: {}, ssn: {} }, erasedAt: expect.any(String) },
        { action: 'created', changes: { name: {}, qty: {}, ssn: {} }, erasedAt: expect.any(String) },
      ],
    });
    // Her run stays, scrubbed; Bob's run stays as it was, but the mail to her is gone from its outbox.
    const scrubbed = await runOf(aliceRun.runId);
    expect(scrubbed).toMatchObject({
      status: 'success',
      steps: [
        { name: 'store', status: 'success', result: null, erased: true },
        { name: 'shape', status: 'success', result: null, erased: true },
      ],
    });
    expect(JSON.stringify(scrubbed)).not.toContain(SSN);
    expect(await runOf(bobRun.runId)).toMatchObject({ status: 'success', effects: [] });
    // The deliveries about her records are gone; Bob's stays.
    const left = await deliveries();
    expect(left).toMatchObject({ total: 1 });
    // The account: deactivated and anonymized; her token no longer works.
    const account = await t.request({ method: 'GET', url: `/api/users/${alice.user.id}`, token: admin });
    expect(account.json()).toMatchObject({
      email: `erased-${alice.user.id}@erased.invalid`,
      name: 'Erased user',
      isActive: false,
    });
    expect((await t.request({ method: 'GET', url: '/auth/me', token: alice.token })).statusCode).toBe(401);
    // Bob's record is untouched.
    expect(
      (await t.request({ method: 'GET', url: `/api/data/${configId}/${bobRecord}`, token: admin }))
        .statusCode,
    ).toBe(200);

    // In the database: no table holds her SSN or her e-mail any more, the audit entry included.
    expect(await tablesHolding(SSN)).toEqual([]);
    // Her address stays only where an admin wrote it: the mail workflow's definition (its kept
    // versions, and its runs' copy of it).
    expect(await tablesHolding(alice.user.email)).toEqual([
      'workflow_runs',
      'workflow_versions',
      'workflows',
    ]);
    const [kept] = await query(
      sql`select count(*)::int as n from idempotency_keys where user_id = ${alice.user.id}::uuid`,
    );
    expect(kept.n).toBe(0);

    // The audit log names who erased whom and how many of each kind.
    const audit = await t.request({ method: 'GET', url: '/api/erasures', token: admin });
    expect(audit.statusCode).toBe(200);
    expect(audit.json()).toEqual({ data: [finished], total: 1, page: 1, pages: 1 });
    expect((await t.request({ method: 'GET', url: '/api/erasures', token: bob.token })).statusCode).toBe(403);

    // A second call does nothing more and answers the same erasure.
    const again = await eraseUser(admin, alice.user.id);
    expect(again.statusCode).toBe(202);
    expect(again.json()).toEqual(finished);
    expect((await t.request({ method: 'GET', url: '/api/erasures', token: admin })).json().total).toBe(1);
  });

  it('erases the records of a form whose field holds a value, their history values and the runs on them', async () => {
    const { t, admin, configId } = s;
    const [alice, bob] = s.users;
    const jane = await submit(alice, { name: 'Jane', qty: 1, city: 'jane@example.com', ssn: SSN });
    const janeAgain = await submit(bob, { name: 'Jane', qty: 2, city: 'jane@example.com' });
    const other = await submit(bob, { name: 'Other', qty: 3, city: 'other@example.com' });
    const shape = await createSteps(t, admin, [
      { name: 'shape', type: 'transform', config: { mapping: { who: 'city' } } },
    ]);
    const janeRun = await run(t, bob.token, shape, configId, {
      name: 'Jane',
      qty: 1,
      city: 'jane@example.com',
    });
    const otherRun = await run(t, bob.token, shape, configId, {
      name: 'Other',
      qty: 1,
      city: 'other@example.com',
    });

    expect((await eraseValue(bob.token, { field: 'city', value: 'jane@example.com' })).statusCode).toBe(403);
    const bad = await eraseValue(admin, { field: '__proto__', value: {} });
    expect(bad.statusCode).toBe(422);
    expect(bad.json()).toMatchObject({
      code: 'VALIDATION_FAILED',
      validationErrors: expect.arrayContaining([
        expect.objectContaining({ field: 'field', rule: 'isFieldPath' }),
        expect.objectContaining({ field: 'value', rule: 'isErasableValue' }),
      ]),
    });
    const unknown = await eraseValue(
      admin,
      { field: 'city', value: 'x' },
      '00000000-0000-4000-8000-000000000000',
    );
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ code: 'CONFIG_NOT_FOUND' });

    const accepted = await eraseValue(admin, { field: 'city', value: 'jane@example.com' });
    expect(accepted.statusCode).toBe(202);
    expect(accepted.json()).toMatchObject({
      kind: 'field',
      subject: { configId, field: 'city' },
      matched: { records: 2, runs: 1 },
    });
    const finished = await done(accepted.json().id);
    expect(finished.counts).toMatchObject({ records: 2, historyEntries: 2, runs: 1 });
    // No account is touched by a field-value erasure.
    expect(finished.counts.accounts).toBeUndefined();

    for (const id of [jane, janeAgain])
      expect(
        (await t.request({ method: 'GET', url: `/api/data/${configId}/${id}`, token: admin })).statusCode,
      ).toBe(404);
    expect(
      (await t.request({ method: 'GET', url: `/api/data/${configId}/${other}`, token: admin })).statusCode,
    ).toBe(200);
    expect(JSON.stringify(await runOf(janeRun.runId))).not.toContain('jane@example.com');
    expect(JSON.stringify(await runOf(otherRun.runId))).toContain('other@example.com');
    expect(await tablesHolding('jane@example.com')).toEqual([]);
    expect(await tablesHolding(SSN)).toEqual([]);
    expect(await tablesHolding('other@example.com')).toEqual(
      expect.arrayContaining(['data_records', 'workflow_runs']),
    );

    // The same request again: the same erasure. Another value: another erasure.
    const again = await eraseValue(admin, { field: 'city', value: 'jane@example.com' });
    expect(again.json()).toEqual(finished);
    const another = await eraseValue(admin, { field: 'city', value: 'other@example.com' });
    expect(another.json().id).not.toBe(finished.id);
    await done(another.json().id);
  });

  it('is resumed by another instance after the one that accepted it died, from the step it was at', async () => {
    const { t, admin, configId } = s;
    const [alice, bob] = s.users;
    const recordId = await submit(alice, { name: 'Alice', qty: 1, ssn: SSN });
    const processor = t.app.get(ErasureProcessor);
    // The accepting instance dies before its first step: nothing works through the erasure.
    const start = jest.spyOn(processor, 'start').mockImplementationOnce(() => undefined);
    const accepted = await eraseUser(admin, alice.user.id);
    start.mockRestore();
    const erasureId = accepted.json().id;
    expect(await erasure(erasureId)).toMatchObject({ status: 'running', stepsDone: [] });
    expect(await processor.takeOver()).toBe(false); // its lease still holds
    expect(
      (await t.request({ method: 'GET', url: `/api/data/${configId}/${recordId}`, token: admin })).statusCode,
    ).toBe(200);
    // Its lease runs out: any instance takes it over and finishes it.
    await query(
      sql`update erasures set lease_until = now() - interval '1 second' where id = ${erasureId}::uuid`,
    );
    expect(await processor.takeOver()).toBe(true);
    await processor.settled();
    expect(await erasure(erasureId)).toMatchObject({ status: 'done', counts: { records: 1, accounts: 1 } });
    expect(await tablesHolding(SSN)).toEqual([]);

    // Mid-way: an erasure that stopped after its first step (the records purged) goes on from the second.
    const record = await submit(bob, { name: 'Bob', qty: 1, ssn: '222-33-4444' });
    const stopped = jest.spyOn(processor, 'start').mockImplementationOnce(() => undefined);
    const second = (await eraseUser(admin, bob.user.id)).json().id;
    stopped.mockRestore();
    await query(sql`delete from data_records where id = ${record}::uuid`);
    await query(
      sql`update erasures set next_step = 1, counts = '{"records": 1}', lease_until = now() - interval '1 second' where id = ${second}::uuid`,
    );
    expect(await processor.takeOver()).toBe(true);
    await processor.settled();
    expect(await erasure(second)).toMatchObject({
      status: 'done',
      // Every step, in their order.
      stepsDone: [...ERASURE_STEPS],
      counts: { records: 1, historyEntries: 1, accounts: 1 },
    });
  });

  it('refuses to erase the only active admin (409 LAST_ADMIN) and an unknown user (404)', async () => {
    const { t, admin } = s;
    const self = await eraseUser(admin, adminId);
    expect(self.statusCode).toBe(409);
    expect(self.json()).toMatchObject({ code: 'LAST_ADMIN' });
    const unknown = await eraseUser(admin, '00000000-0000-4000-8000-000000000000');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ code: 'USER_NOT_FOUND' });
    expect(
      (await t.request({ method: 'GET', url: '/api/erasures/nope', token: admin })).json(),
    ).toMatchObject({
      code: 'ERASURE_NOT_FOUND',
    });
  });
});
