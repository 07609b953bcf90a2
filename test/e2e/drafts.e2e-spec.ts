import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { sql } from 'drizzle-orm';
import ExcelJS from 'exceljs';
import { RecordDraftRetention } from '../../src/data/record-draft-retention';
import { EventDispatcher } from '../../src/events/event-dispatcher.service';
import { createConfig } from '../factories/config.factory';
import { createTwoSites, ON_A as onA, ON_B as onB } from '../factories/two-sites';
import { createUser, type TestUser } from '../factories/user.factory';
import { useAppSuite } from '../utils/app-suite';
import { errorBody } from '../utils/error-body';
import { requestAs, type Call } from '../utils/request-as';

const DAY = 86_400_000;
/** Missing the required `qty`. */
const HALF = { name: 'Ann', city: 'Paris' };

/**
 * Drafts: a record saved before it is complete (types checked, required fields, rules and
 * computed values not), seen only by its owner and admins, counted nowhere until its submit checks
 * it as a create would.
 */
describe('drafts', () => {
  /** alice, bob and a manager; an order form. */
  const s = useAppSuite({
    env: { DRAFT_RETENTION_DAYS: '7', EVENTS_POLL_MS: '600000', WEBHOOK_WORKERS: '0' },
    users: [{}, {}, { role: 'manager' }],
    forms: 1,
  });
  const send = (...call: Call) => requestAs(s.t, ...call);

  /** Saves a record (`?status=draft`: a draft) that must be created, and returns its id. */
  const createdId = async (query: string, user: TestUser, payload: object, config: string, headers = {}) => {
    const response = await send(user.token, 'POST', `/api/data/${config}${query}`, payload, headers);
    expect(response.statusCode).toBe(201);
    return response.json().dataId as string;
  };
  const saveDraft = (user: TestUser, payload: object = HALF, config = s.configId, headers = {}) =>
    createdId('?status=draft', user, payload, config, headers);
  const submitRecord = (user: TestUser, payload: object) => createdId('', user, payload, s.configId);
  const read = (token: string, dataId: string, config = s.configId, headers = {}) =>
    send(token, 'GET', `/api/data/${config}/${dataId}`, undefined, headers);
  const patch = (token: string, dataId: string, payload: object, headers = {}, config = s.configId) =>
    send(token, 'PATCH', `/api/data/${config}/${dataId}`, payload, headers);
  const submit = (token: string, dataId: string, headers = {}, config = s.configId) =>
    send(token, 'POST', `/api/data/${config}/${dataId}/submit`, undefined, headers);
  const get = (token: string, url: string) => send(token, 'GET', url);
  const idsOf = (rows: { _id: string }[]) => rows.map((row) => row._id).sort();

  describe('saving and submitting', () => {
    it('saves a draft missing required fields, reads it back, refuses its submit with the reasons', async () => {
      const [alice] = s.users;
      const saved = await send(alice.token, 'POST', `/api/data/${s.configId}?status=draft`, HALF);
      expect(saved.statusCode).toBe(201);
      expect(saved.headers.etag).toBe('"1"');
      const dataId = saved.json().dataId;
      expect(saved.json()).toMatchObject({
        success: true,
        dataId,
        computedResults: {},
        data: { _id: dataId, data: HALF, status: 'draft', isActive: true, version: 1 },
      });
      expect(saved.json().data.computedResults).toBeUndefined();

      const back = await read(alice.token, dataId);
      expect(back.statusCode).toBe(200);
      expect(back.json()).toMatchObject({ _id: dataId, data: HALF, status: 'draft', version: 1 });

      const refused = await submit(alice.token, dataId);
      expect(refused.statusCode).toBe(422);
      expect(refused.json()).toMatchObject({
        ...errorBody(422, 'DRAFT_INCOMPLETE', expect.stringMatching(/draft/i)),
        validationErrors: [{ field: 'qty', rule: 'required' }],
        fieldResults: { qty: { valid: false }, name: { valid: true } },
      });
      // It stays a draft, unchanged.
      expect((await read(alice.token, dataId)).json()).toMatchObject({ status: 'draft', version: 1 });

      const hu = await submit(alice.token, dataId, { 'accept-language': 'hu' });
      expect(hu.json().error).toMatch(/piszkozat/i);
    });

    it('checks types and unknown fields but not rules; refuses a submit that breaks a rule', async () => {
      const [alice] = s.users;
      const wrongType = await send(alice.token, 'POST', `/api/data/${s.configId}?status=draft`, {
        name: 'Ann',
        qty: 'three',
      });
      expect(wrongType.statusCode).toBe(400);
      expect(wrongType.json()).toMatchObject({
        code: 'DATA_VALIDATION_FAILED',
        validationErrors: [{ field: 'qty', rule: 'type' }],
      });
      const strict = await createConfig(s.t, s.admin, {
        schema: {
          type: 'object',
          additionalProperties: false,
          required: ['name'],
          properties: { name: { type: 'string' } },
        },
        validationRules: [],
        computedRules: [],
      });
      const unknown = await send(alice.token, 'POST', `/api/data/${strict}?status=draft`, { nickname: 'A' });
      expect(unknown.statusCode).toBe(400);
      expect(unknown.json().validationErrors).toEqual([
        expect.objectContaining({ field: 'nickname', rule: 'additionalProperties' }),
      ]);
      expect(await saveDraft(alice, {}, strict)).toEqual(expect.any(String));

      // The rule maxQty (qty <= 100) waits for the submit.
      const overRule = await saveDraft(alice, { name: 'Ann', qty: 500 });
      const refused = await submit(alice.token, overRule);
      expect(refused.statusCode).toBe(422);
      expect(refused.json().validationErrors).toEqual([
        { field: 'qty', rule: 'maxQty', message: 'At most 100 pieces' },
      ]);
      const wrongPatch = await patch(alice.token, overRule, { price: 'cheap' });
      expect(wrongPatch.statusCode).toBe(400);
      expect(wrongPatch.json().validationErrors).toEqual([
        expect.objectContaining({ field: 'price', rule: 'type' }),
      ]);
    });

    it('is accepted once complete: a submitted record with computed values, its history and version', async () => {
      const [alice] = s.users;
      const dataId = await saveDraft(alice);
      const completed = await patch(alice.token, dataId, { qty: 4, price: 2.5 });
      expect(completed.statusCode).toBe(200);
      expect(completed.json().data).toMatchObject({ status: 'draft', version: 2 });
      expect(completed.json().data.computedResults).toBeUndefined();

      const accepted = await submit(alice.token, dataId);
      expect(accepted.statusCode).toBe(200);
      expect(accepted.headers.etag).toBe('"3"');
      expect(accepted.json()).toMatchObject({
        success: true,
        dataId,
        computedResults: { total: 10, bigOrder: false },
        data: {
          data: { ...HALF, qty: 4, price: 2.5 },
          computedResults: { total: 10, bigOrder: false },
          version: 3,
        },
      });
      expect(accepted.json().data.status).toBeUndefined();
      expect((await read(alice.token, dataId)).json().status).toBeUndefined();

      const history = await get(alice.token, `/api/data/${s.configId}/${dataId}/history`);
      expect(history.json().data.map((entry: { action: string }) => entry.action)).toEqual([
        'submitted',
        'draft_saved',
        'draft_saved',
      ]);
      expect(history.json().data[0].changes).toEqual({});

      const again = await submit(alice.token, dataId);
      expect(again.statusCode).toBe(409);
      expect(again.json().code).toBe('RECORD_NOT_DRAFT');
    });

    it('edits and discards a draft on a form that allows neither, until it is submitted', async () => {
      const [alice] = s.users;
      const locked = await createConfig(s.t, s.admin, {
        preferences: { saveLimit: null, allowEdit: false, allowDelete: false, storeComputedResults: true },
      });
      const dataId = await saveDraft(alice, HALF, locked);
      expect((await patch(alice.token, dataId, { qty: 2 }, {}, locked)).statusCode).toBe(200);
      expect((await submit(alice.token, dataId, {}, locked)).statusCode).toBe(200);
      const refused = await patch(alice.token, dataId, { qty: 3 }, {}, locked);
      expect(refused.statusCode).toBe(403);

      const discarded = await saveDraft(alice, HALF, locked);
      const removed = await send(alice.token, 'DELETE', `/api/data/${locked}/${discarded}`);
      expect(removed.statusCode).toBe(200);
    });
  });

  describe('the save limit', () => {
    const limited = (saveLimit: number) =>
      createConfig(s.t, s.admin, {
        preferences: { saveLimit, allowEdit: true, allowDelete: true, storeComputedResults: true },
      });

    it('counts a draft only once submitted', async () => {
      const [alice, bob] = s.users;
      const form = await limited(1);
      const first = await saveDraft(alice, { name: 'Ann', qty: 1 }, form);
      const second = await saveDraft(alice, { name: 'Ann', qty: 2 }, form);
      const third = await saveDraft(alice, { name: 'Ann', qty: 3 }, form);
      expect((await submit(alice.token, first, {}, form)).statusCode).toBe(200);

      const over = await submit(alice.token, second, {}, form);
      expect(over.statusCode).toBe(400);
      expect(over.json()).toMatchObject({
        code: 'DATA_SAVE_LIMIT_REACHED',
        details: { limit: 1, existingDataId: first },
      });
      expect((await read(alice.token, second, form)).json()).toMatchObject({ status: 'draft', version: 1 });
      // Drafts still save at the limit; a create does not pass it.
      await saveDraft(alice, HALF, form);
      const create = await send(alice.token, 'POST', `/api/data/${form}`, { name: 'Ann', qty: 9 });
      expect(create.json().code).toBe('DATA_SAVE_LIMIT_REACHED');
      // Another user's limit is their own.
      expect((await submit(s.admin, third, {}, form)).statusCode).toBe(400);
      const bobs = await saveDraft(bob, { name: 'Bob', qty: 1 }, form);
      expect((await submit(bob.token, bobs, {}, form)).statusCode).toBe(200);
    });

    it('two concurrent submits at the limit: exactly one passes', async () => {
      const [alice] = s.users;
      const form = await limited(1);
      const drafts = [
        await saveDraft(alice, { name: 'Ann', qty: 1 }, form),
        await saveDraft(alice, { name: 'Ann', qty: 2 }, form),
      ];
      const answers = await Promise.all(drafts.map((id) => submit(alice.token, id, {}, form)));
      expect(answers.map((answer) => answer.statusCode).sort()).toEqual([200, 400]);
      expect((await get(alice.token, `/api/data/${form}`)).json().total).toBe(1);
      expect((await get(alice.token, `/api/data/${form}?status=draft`)).json().total).toBe(1);
    });

    it('a concurrent submit and create at the limit: exactly one passes', async () => {
      const [alice] = s.users;
      const form = await limited(1);
      const draft = await saveDraft(alice, { name: 'Ann', qty: 1 }, form);
      const answers = await Promise.all([
        submit(alice.token, draft, {}, form),
        send(alice.token, 'POST', `/api/data/${form}`, { name: 'A', qty: 2 }),
      ]);
      // The submit (200) or the create (201) wins; the other meets the limit.
      const [submitted, created] = answers.map((answer) => answer.statusCode);
      expect([submitted, created]).toEqual(expect.arrayContaining([400]));
      expect(submitted === 200 || created === 201).toBe(true);
      expect((await get(alice.token, `/api/data/${form}`)).json().total).toBe(1);
    });
  });

  describe('who sees a draft', () => {
    it('its owner and admins only: another user, even with viewAllResults, gets a 404 everywhere', async () => {
      const [alice, bob, manager] = s.users;
      const dataId = await saveDraft(alice);
      for (const token of [bob.token, manager.token]) {
        expect((await read(token, dataId)).statusCode).toBe(404);
        expect((await patch(token, dataId, { qty: 1 })).statusCode).toBe(404);
        expect((await submit(token, dataId)).statusCode).toBe(404);
        expect((await get(token, `/api/data/${s.configId}/${dataId}/history`)).statusCode).toBe(404);
        const drafts = await get(token, `/api/data/${s.configId}?status=draft`);
        expect(drafts.json()).toMatchObject({ data: [], total: 0 });
      }
      const removed = await send(bob.token, 'DELETE', `/api/data/${s.configId}/${dataId}`);
      expect(removed.statusCode).toBe(404);
      expect((await read(s.admin, dataId)).statusCode).toBe(200);
      const all = await get(s.admin, `/api/data/${s.configId}?status=draft`);
      expect(idsOf(all.json().data)).toEqual([dataId]);
      // An admin may complete and submit it; it stays alice's.
      expect((await patch(s.admin, dataId, { qty: 1 })).statusCode).toBe(200);
      const submitted = await submit(s.admin, dataId);
      expect(submitted.statusCode).toBe(200);
      expect(submitted.json().data.userId).toBe(alice.user.id);
      expect((await read(manager.token, dataId)).statusCode).toBe(200);
    });

    it('in the site it was saved through only', async () => {
      const { siteA, siteB } = await createTwoSites(s.t, s.admin);
      const siteUser = await createUser(s.t, { siteId: siteA });
      const managerB = await createUser(s.t, { role: 'manager', siteId: siteB });
      const dataId = await saveDraft(siteUser, HALF, s.configId, onA);
      expect((await read(siteUser.token, dataId, s.configId, onA)).json()).toMatchObject({ status: 'draft' });
      expect((await read(s.admin, dataId, s.configId, onA)).statusCode).toBe(200);
      expect((await read(managerB.token, dataId, s.configId, onB)).statusCode).toBe(404);
      const elsewhere = await send(
        managerB.token,
        'GET',
        `/api/data/${s.configId}?status=draft`,
        undefined,
        onB,
      );
      expect(elsewhere.json().total).toBe(0);
      // Once submitted it is a record of site A: still none of site B's.
      expect((await patch(siteUser.token, dataId, { qty: 1 }, onA)).statusCode).toBe(200);
      expect((await submit(siteUser.token, dataId, onA)).statusCode).toBe(200);
      expect((await read(managerB.token, dataId, s.configId, onB)).statusCode).toBe(404);
    });
  });

  describe('reads leave drafts out unless asked', () => {
    let kept: string;
    let aliceDraft: string;
    let bobDraft: string;

    beforeEach(async () => {
      const [alice, bob] = s.users;
      kept = await submitRecord(alice, { name: 'Kept', qty: 2, price: 1 });
      aliceDraft = await saveDraft(alice, { name: 'Draft A', qty: 3 });
      bobDraft = await saveDraft(bob, { name: 'Draft B' });
    });

    it('the paging list and the grid form', async () => {
      const [alice, , manager] = s.users;
      const list = await get(s.admin, `/api/data/${s.configId}`);
      expect(list.json()).toMatchObject({ total: 1, data: [{ _id: kept }] });
      const drafts = await get(s.admin, `/api/data/${s.configId}?status=draft`);
      expect(drafts.json().total).toBe(2);
      expect(idsOf(drafts.json().data)).toEqual([aliceDraft, bobDraft].sort());
      expect(drafts.json().data.every((row: { status: string }) => row.status === 'draft')).toBe(true);
      const own = await get(alice.token, `/api/data/${s.configId}?status=draft`);
      expect(idsOf(own.json().data)).toEqual([aliceDraft]);
      const submittedOnly = await get(s.admin, `/api/data/${s.configId}?status=submitted`);
      expect(submittedOnly.json().total).toBe(1);

      const grid = await get(s.admin, `/api/data/${s.configId}?take=10&requireTotalCount=true`);
      expect(grid.json()).toMatchObject({ totalCount: 1, data: [{ _id: kept }] });
      const gridDrafts = await get(
        s.admin,
        `/api/data/${s.configId}?take=10&requireTotalCount=true&status=draft`,
      );
      expect(gridDrafts.json().totalCount).toBe(2);
      const grouped = await get(
        manager.token,
        `/api/data/${s.configId}?group=${encodeURIComponent('[{"selector":"data.name","isExpanded":false}]')}&status=draft`,
      );
      expect(grouped.json().data).toEqual([]);

      const bad = await get(s.admin, `/api/data/${s.configId}?status=pending`);
      expect(bad.statusCode).toBe(422);
      expect(bad.json().validationErrors).toEqual([
        { field: 'status', rule: 'isIn', message: 'status must be submitted or draft' },
      ]);
    });

    it('export in every format, and statistics', async () => {
      const [alice, , manager] = s.users;
      const json = await get(s.admin, `/api/data/${s.configId}/export`);
      expect(idsOf(JSON.parse(json.body))).toEqual([kept]);
      const csv = await get(s.admin, `/api/data/${s.configId}/export?format=csv`);
      expect(csv.body.trim().split(/\r?\n/)).toHaveLength(2);
      expect(csv.body).not.toContain('Draft');
      const xlsx = await get(s.admin, `/api/data/${s.configId}/export?format=excel`);
      expect(xlsx.statusCode).toBe(200);
      const sheet = await sheetRows(xlsx.rawPayload);
      expect(sheet.flat().join(' ')).toContain('Kept');
      expect(sheet.flat().join(' ')).not.toContain('Draft');

      const draftsJson = await get(s.admin, `/api/data/${s.configId}/export?status=draft`);
      expect(idsOf(JSON.parse(draftsJson.body))).toEqual([aliceDraft, bobDraft].sort());
      const draftsCsv = await get(alice.token, `/api/data/${s.configId}/export?format=csv&status=draft`);
      // alice holds no exportResults by default.
      expect(draftsCsv.statusCode).toBe(403);
      const managerCsv = await get(manager.token, `/api/data/${s.configId}/export?format=csv&status=draft`);
      expect(managerCsv.statusCode).toBe(200);
      expect(managerCsv.body).not.toContain('Draft');

      const stats = await get(s.admin, `/api/data/${s.configId}/stats`);
      expect(stats.json()).toMatchObject({
        total: 1,
        today: 1,
        byUser: [{ userId: alice.user.id, count: 1 }],
      });
      const draftStats = await get(s.admin, `/api/data/${s.configId}/stats?status=draft`);
      expect(draftStats.json()).toMatchObject({ total: 2, today: 2 });
    });
  });

  describe('versions and If-Match', () => {
    it('a draft has versions; a stale If-Match is a 412 on its edit and its submit', async () => {
      const [alice] = s.users;
      const dataId = await saveDraft(alice);
      const first = await patch(alice.token, dataId, { price: 2 }, { 'if-match': '"1"' });
      expect(first.statusCode).toBe(200);
      expect(first.headers.etag).toBe('"2"');
      const stale = await patch(alice.token, dataId, { qty: 2 }, { 'if-match': '"1"' });
      expect(stale.statusCode).toBe(412);
      expect(stale.json()).toMatchObject({
        code: 'PRECONDITION_FAILED',
        details: { currentVersion: 2, changedFields: ['price'] },
      });
      expect((await patch(alice.token, dataId, { qty: 2 }, { 'if-match': '"2"' })).statusCode).toBe(200);
      const staleSubmit = await submit(alice.token, dataId, { 'if-match': '"2"' });
      expect(staleSubmit.statusCode).toBe(412);
      expect(staleSubmit.json().details).toMatchObject({ currentVersion: 3, changedFields: ['qty'] });
      const notModified = await read(alice.token, dataId, s.configId, { 'if-none-match': '"3"' });
      expect(notModified.statusCode).toBe(304);
      const accepted = await submit(alice.token, dataId, { 'if-match': '"3"' });
      expect(accepted.statusCode).toBe(200);
      expect(accepted.headers.etag).toBe('"4"');
    });
  });

  describe('retention', () => {
    it('drafts untouched for DRAFT_RETENTION_DAYS go to the trash, restorable as drafts', async () => {
      const [alice] = s.users;
      const old = await saveDraft(alice);
      const recent = await saveDraft(alice);
      const oldSubmitted = await submitRecord(alice, { name: 'Old', qty: 1 });
      await age(old, 8);
      await age(recent, 6);
      await age(oldSubmitted, 30);

      const retention = s.t.app.get(RecordDraftRetention);
      const moved = await Promise.all([retention.purge(), retention.purge()]);
      expect(moved[0] + moved[1]).toBe(1);
      expect(await retention.purge()).toBe(0);

      expect((await read(alice.token, old)).statusCode).toBe(404);
      expect((await read(alice.token, recent)).statusCode).toBe(200);
      expect((await read(alice.token, oldSubmitted)).statusCode).toBe(200);
      const trash = await get(alice.token, `/api/data/${s.configId}?deleted=true`);
      expect(trash.json()).toMatchObject({
        total: 1,
        data: [{ _id: old, status: 'draft', isActive: false }],
      });
      const history = await get(alice.token, `/api/data/${s.configId}/${old}/history`);
      expect(history.json().data[0]).toMatchObject({
        action: 'deleted',
        userId: null,
        origin: { kind: 'retention', days: 7 },
      });

      const restored = await send(alice.token, 'POST', `/api/data/${s.configId}/${old}/restore`);
      expect(restored.statusCode).toBe(200);
      expect(restored.json()).toMatchObject({ status: 'draft', isActive: true });
    });
  });

  it("the README's draft examples are part of docs/examples.sh (which the README examples test runs)", () => {
    const readme = readFileSync(resolve(__dirname, '../../README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('### Drafts'));
    const block = section.slice(
      section.indexOf('```bash\n') + 8,
      section.indexOf('```\n', section.indexOf('```bash')),
    );
    expect(block).toContain('/submit');
    expect(readFileSync(resolve(__dirname, '../../docs/examples.sh'), 'utf8')).toContain(block);
  });

  describe('events', () => {
    it('record events leave drafts out; record.draft_saved goes to who names it; the submit is a record.created', async () => {
      const [alice] = s.users;
      const subscribe = async (events: string[]) => {
        const response = await send(s.admin, 'POST', '/api/webhooks', {
          url: 'https://hooks.example.com/forms',
          events,
        });
        expect(response.statusCode).toBe(201);
        return response.json().id as string;
      };
      const records = await subscribe([
        'record.created',
        'record.updated',
        'record.deleted',
        'record.restored',
      ]);
      const drafts = await subscribe(['record.draft_saved']);
      const delivered = async (webhookId: string) => {
        await s.t.app.get(EventDispatcher).dispatch();
        const response = await get(s.admin, `/api/webhooks/${webhookId}/deliveries?limit=100`);
        return (response.json().data as { eventType: string }[]).map((delivery) => delivery.eventType).sort();
      };

      const dataId = await saveDraft(alice);
      await patch(alice.token, dataId, { qty: 2 });
      const discarded = await saveDraft(alice);
      await send(alice.token, 'DELETE', `/api/data/${s.configId}/${discarded}`);
      expect(await delivered(records)).toEqual([]);
      expect(await delivered(drafts)).toEqual([
        'record.draft_saved',
        'record.draft_saved',
        'record.draft_saved',
      ]);

      expect((await submit(alice.token, dataId)).statusCode).toBe(200);
      expect(await delivered(records)).toEqual(['record.created']);
      expect(await delivered(drafts)).toHaveLength(3);
    });
  });

  /** Moves a record's last change `days` into the past (what retention reads). */
  const age = async (dataId: string, days: number) => {
    const at = new Date(Date.now() - days * DAY).toISOString();
    await s.t.database.client.db.execute(
      sql`update data_records set updated_at = ${at}::timestamptz, created_at = ${at}::timestamptz where id = ${dataId}::uuid`,
    );
  };
});

/** The cell texts of the first sheet of a workbook. */
async function sheetRows(bytes: Buffer): Promise<string[][]> {
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.load(bytes as unknown as ArrayBuffer);
  const rows: string[][] = [];
  workbook.worksheets[0].eachRow((row) => {
    rows.push((row.values as unknown[]).slice(1).map((value) => JSON.stringify(value ?? '')));
  });
  return rows;
}
