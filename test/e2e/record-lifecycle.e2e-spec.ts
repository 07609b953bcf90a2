import { sql } from 'drizzle-orm';
import { RecordTrashPurge } from '../../src/data/record-trash-purge';
import { rowsOf } from '../../src/database/raw-rows';
import { createConfig } from '../factories/config.factory';
import { createUser, type TestUser } from '../factories/user.factory';
import { useAppSuite } from '../utils/app-suite';
import { requestAs, type Call } from '../utils/request-as';
import { createSteps, run } from '../utils/workflow-api';
import { createTwoSites, ON_A as onA, ON_B as onB } from '../factories/two-sites';

const ORDER = { name: 'Ann', qty: 2, price: 3 };
const FORM = 'application/x-www-form-urlencoded';
const DAY = 86_400_000;

/**
 * Record lifecycle: a deleted record goes to a trash (listed with `deleted=true`, restorable
 * until RECORD_TRASH_DAYS, then purged), and every change of a record appends to its history.
 */
describe('record lifecycle: trash, restore, purge and history', () => {
  /** alice, bob and a manager; an order form. */
  const s = useAppSuite({ env: { RECORD_TRASH_DAYS: '7' }, users: [{}, {}, { role: 'manager' }], forms: 1 });
  const send = (...call: Call) => requestAs(s.t, ...call);

  /** Creates a record that must be created (201) and returns its id. */
  const submit = async (user: TestUser, payload: object = ORDER, config = s.configId) => {
    const response = await send(user.token, 'POST', `/api/data/${config}`, payload);
    expect(response.statusCode).toBe(201);
    return response.json().dataId as string;
  };
  const remove = (token: string, dataId: string, config = s.configId) =>
    send(token, 'DELETE', `/api/data/${config}/${dataId}`);
  const restore = (token: string, dataId: string, config = s.configId) =>
    send(token, 'POST', `/api/data/${config}/${dataId}/restore`);
  const list = (token: string, query = '', config = s.configId) =>
    send(token, 'GET', `/api/data/${config}${query}`);
  const history = (token: string, dataId: string, query = '', config = s.configId) =>
    send(token, 'GET', `/api/data/${config}/${dataId}/history${query}`);
  const idsOf = (response: { json(): { data: { _id: string }[] } }) =>
    response
      .json()
      .data.map((record) => record._id)
      .sort();
  const purge = (cutoff?: Date) => s.t.app.get(RecordTrashPurge).purge(cutoff);
  /** Moves a record's time in the trash back by `days` (the clock of the purge, without waiting). */
  const ageInTrash = (dataId: string, days: number) =>
    s.t.database.client.db.execute(
      sql`update data_records set deleted_at = deleted_at - ${`${days} days`}::interval where id = ${dataId}::uuid`,
    );
  const storedRecord = async (dataId: string) =>
    rowsOf(
      await s.t.database.client.db.execute(sql`select id from data_records where id = ${dataId}::uuid`),
    )[0];

  describe('the trash', () => {
    it('lists deleted records to whoever may delete there: the owner their own, admins all; others 403', async () => {
      const [alice, bob, manager] = s.users;
      const mine = await submit(alice);
      const kept = await submit(alice);
      const theirs = await submit(bob);
      expect((await remove(alice.token, mine)).json()).toMatchObject({
        _id: mine,
        isActive: false,
        deletedAt: expect.any(String),
      });
      expect((await remove(bob.token, theirs)).statusCode).toBe(200);

      const own = await list(alice.token, '?deleted=true');
      expect(own.statusCode).toBe(200);
      expect(own.json()).toMatchObject({ total: 1, page: 1, pages: 1 });
      expect(own.json().data[0]).toMatchObject({ _id: mine, isActive: false, data: ORDER });
      expect(idsOf(await list(s.admin, '?deleted=true'))).toEqual([mine, theirs].sort());
      // The grid form of the trash, and the active list without the deleted ones.
      const grid = await list(alice.token, '?deleted=true&take=10&requireTotalCount=true');
      expect(grid.json()).toMatchObject({ totalCount: 1, data: [{ _id: mine }] });
      expect(idsOf(await list(alice.token))).toEqual([kept]);
      expect(idsOf(await list(alice.token, '?deleted=false'))).toEqual([kept]);

      // A manager sees everyone's active records, but the trash only of their own.
      expect((await list(manager.token, '?deleted=true')).json()).toMatchObject({ total: 0, data: [] });
      const bad = await list(alice.token, '?deleted=yes');
      expect(bad.statusCode).toBe(422);
      expect(bad.json()).toMatchObject({
        code: 'VALIDATION_FAILED',
        validationErrors: [{ field: 'deleted', rule: 'isBoolean', message: 'deleted must be true or false' }],
      });
    });

    it('is a 403 on a form that does not allow deletion, and without deleteOwnResults', async () => {
      const [alice] = s.users;
      const noDelete = await createConfig(s.t, s.admin, {
        preferences: { saveLimit: null, allowEdit: true, allowDelete: false, storeComputedResults: true },
      });
      const refused = await list(alice.token, '?deleted=true', noDelete);
      expect(refused.statusCode).toBe(403);
      expect(refused.json()).toMatchObject({
        code: 'FORBIDDEN',
        error: 'This form does not allow deleting submissions.',
      });
      expect((await list(s.admin, '?deleted=true', noDelete)).statusCode).toBe(200);

      await send(s.admin, 'PUT', `/api/permissions/${s.configId}`, {
        roles: { user: ['viewForm', 'viewOwnResults'] },
      });
      const without = await list(alice.token, '?deleted=true&take=5');
      expect(without.statusCode).toBe(403);
      expect(without.json().code).toBe('FORBIDDEN');
      expect((await list(alice.token)).statusCode).toBe(200);
    });

    it('export, statistics and lists keep excluding the trash', async () => {
      const [alice] = s.users;
      const active = await submit(alice, { ...ORDER, name: 'Active' });
      const deleted = await submit(alice, { ...ORDER, name: 'Deleted' });
      await remove(alice.token, deleted);

      const exported = await send(s.admin, 'GET', `/api/data/${s.configId}/export`);
      expect(exported.json().map((record: { _id: string }) => record._id)).toEqual([active]);
      const csv = await send(s.admin, 'GET', `/api/data/${s.configId}/export?format=csv`);
      expect(csv.body).toContain('Active');
      expect(csv.body).not.toContain('Deleted');
      const stats = await send(s.admin, 'GET', `/api/data/${s.configId}/stats`);
      expect(stats.json()).toMatchObject({ total: 1, byUser: [{ userId: alice.user.id, count: 1 }] });
      expect(idsOf(await list(s.admin))).toEqual([active]);
      expect((await list(s.admin, '?take=10&requireTotalCount=true')).json().totalCount).toBe(1);
      expect((await send(s.admin, 'GET', `/api/data/${s.configId}/${deleted}`)).statusCode).toBe(404);
    });
  });

  describe('restore', () => {
    /** On a form with a save limit of 1, alice's first record deleted and her second active. */
    const oneDeletedOneActive = async () => {
      const [alice] = s.users;
      const limited = await createConfig(s.t, s.admin, {
        preferences: { saveLimit: 1, allowEdit: true, allowDelete: true, storeComputedResults: true },
      });
      const first = await submit(alice, ORDER, limited);
      await remove(alice.token, first, limited);
      return { limited, first, second: await submit(alice, ORDER, limited) };
    };

    it('brings a deleted record back (200), as the owner or an admin; someone else is refused', async () => {
      const [alice, bob] = s.users;
      const dataId = await submit(alice);
      await remove(alice.token, dataId);
      expect((await restore(bob.token, dataId)).statusCode).toBe(403);

      const restored = await restore(alice.token, dataId);
      expect(restored.statusCode).toBe(200);
      expect(restored.json()).toMatchObject({ _id: dataId, isActive: true, data: ORDER });
      expect(restored.json().deletedAt).toBeUndefined();
      expect(idsOf(await list(alice.token))).toEqual([dataId]);
      expect((await list(alice.token, '?deleted=true')).json().total).toBe(0);

      // Not in the trash any more: a 404, as for an id that never was.
      const again = await restore(alice.token, dataId);
      expect(again.statusCode).toBe(404);
      expect(again.json().code).toBe('RECORD_NOT_FOUND');
      expect((await restore(s.admin, '00000000-0000-4000-8000-000000000000')).statusCode).toBe(404);
      expect((await restore(s.admin, 'not-a-uuid')).statusCode).toBe(404);

      await remove(alice.token, dataId);
      expect((await restore(s.admin, dataId)).json()).toMatchObject({ _id: dataId, isActive: true });
    });

    it("409 DATA_RESTORE_LIMIT_REACHED when the owner's active records fill the save limit", async () => {
      const [alice] = s.users;
      const { limited, first, second } = await oneDeletedOneActive();

      const refused = await restore(alice.token, first, limited);
      expect(refused.statusCode).toBe(409);
      expect(refused.json()).toMatchObject({
        code: 'DATA_RESTORE_LIMIT_REACHED',
        error: 'Restoring this record would exceed the limit of 1 submissions for this form.',
        details: { limit: 1 },
      });
      // An admin restoring it is held to the owner's limit too; the record stays in the trash.
      expect((await restore(s.admin, first, limited)).statusCode).toBe(409);
      expect(idsOf(await list(alice.token, '?deleted=true', limited))).toEqual([first]);

      await remove(alice.token, second, limited);
      expect((await restore(alice.token, first, limited)).statusCode).toBe(200);
    });

    it('concurrent restores within a save limit of 1: exactly one succeeds', async () => {
      const [alice] = s.users;
      const { limited, first, second } = await oneDeletedOneActive();
      await remove(alice.token, second, limited);

      const answers = await Promise.all([
        restore(alice.token, first, limited),
        restore(alice.token, second, limited),
      ]);
      expect(answers.map((answer) => answer.statusCode).sort()).toEqual([200, 409]);
      expect((await list(alice.token, '', limited)).json().total).toBe(1);
    });
  });

  describe('purge', () => {
    it('after RECORD_TRASH_DAYS the record is purged (restore 404), its history stays for admins', async () => {
      const [alice] = s.users;
      const old = await submit(alice);
      const recent = await submit(alice);
      const active = await submit(alice);
      await remove(alice.token, old);
      await remove(alice.token, recent);
      await ageInTrash(old, 8);
      await ageInTrash(recent, 6);

      // Instances purging at once: each record goes once, and a later run finds nothing.
      const purged = await Promise.all([purge(), purge()]);
      expect(purged[0] + purged[1]).toBe(1);
      expect(await purge()).toBe(0);
      expect(await storedRecord(old)).toBeUndefined();
      expect(await storedRecord(recent)).toBeDefined();
      expect(await storedRecord(active)).toBeDefined();

      const gone = await restore(alice.token, old);
      expect(gone.statusCode).toBe(404);
      expect(gone.json().code).toBe('RECORD_NOT_FOUND');
      expect(idsOf(await list(s.admin, '?deleted=true'))).toEqual([recent]);

      const kept = await history(s.admin, old);
      expect(kept.statusCode).toBe(200);
      expect(kept.json()).toMatchObject({ total: 2, data: [{ action: 'deleted' }, { action: 'created' }] });
      // Decided: a purged record's history is the admins'; its owner gets the 404 of a missing record.
      expect((await history(alice.token, old)).statusCode).toBe(404);
      expect((await history(s.admin, '00000000-0000-4000-8000-000000000000')).statusCode).toBe(404);

      // A cutoff in the future purges what is in the trash now.
      expect(await purge(new Date(Date.now() + DAY))).toBe(1);
      expect((await restore(alice.token, recent)).statusCode).toBe(404);
    });
  });

  describe('history', () => {
    const route = (value: string) => ({ kind: 'route', route: value });

    it('every create, update (PUT, PATCH, grid store), delete (route, grid store) and restore, newest first', async () => {
      const [alice] = s.users;
      const dataId = await submit(alice, { name: 'Ann', qty: 2, price: 3 });
      const patch = await send(alice.token, 'PATCH', `/api/data/${s.configId}/${dataId}`, { qty: 4 });
      expect(patch.statusCode).toBe(200);
      const put = await send(alice.token, 'PUT', `/api/data/${s.configId}/${dataId}`, {
        name: 'Ann',
        qty: 4,
        city: 'Pécs',
      });
      expect(put.statusCode).toBe(200);
      const store = await send(
        alice.token,
        'PUT',
        `/api/data/${s.configId}`,
        new URLSearchParams({
          key: dataId,
          values: JSON.stringify({ 'data.city': 'Győr' }),
        }).toString(),
        { 'content-type': FORM },
      );
      expect(store.statusCode).toBe(200);
      expect((await remove(alice.token, dataId)).statusCode).toBe(200);
      expect((await restore(alice.token, dataId)).statusCode).toBe(200);
      const storeDelete = await send(
        alice.token,
        'DELETE',
        `/api/data/${s.configId}`,
        new URLSearchParams({ key: dataId }).toString(),
        { 'content-type': FORM },
      );
      expect(storeDelete.statusCode).toBe(200);

      const response = await history(alice.token, dataId);
      expect(response.statusCode).toBe(200);
      const body = response.json();
      expect(body).toMatchObject({ total: 7, page: 1, pages: 1 });
      const common = { recordId: dataId, configId: s.configId, userId: alice.user.id, configVersion: 1 };
      expect(body.data).toEqual(
        [
          { ...common, action: 'deleted', origin: route('DELETE /api/data/:configId'), changes: {} },
          {
            ...common,
            action: 'restored',
            origin: route('POST /api/data/:configId/:dataId/restore'),
            changes: {},
          },
          { ...common, action: 'deleted', origin: route('DELETE /api/data/:configId/:dataId'), changes: {} },
          {
            ...common,
            action: 'updated',
            origin: route('PUT /api/data/:configId'),
            changes: { city: { before: 'Pécs', after: 'Győr' } },
          },
          {
            ...common,
            action: 'updated',
            origin: route('PUT /api/data/:configId/:dataId'),
            changes: { price: { before: 3 }, city: { after: 'Pécs' } },
          },
          {
            ...common,
            action: 'updated',
            origin: route('PATCH /api/data/:configId/:dataId'),
            changes: { qty: { before: 2, after: 4 } },
          },
          {
            ...common,
            action: 'created',
            origin: route('POST /api/data/:configId'),
            changes: { name: { after: 'Ann' }, qty: { after: 2 }, price: { after: 3 } },
          },
        ].map((entry) => ({ ...entry, id: expect.any(Number), at: expect.any(String), erasedAt: null })),
      );
      const ids = body.data.map((entry: { id: number }) => entry.id);
      expect(ids).toEqual([...ids].sort((a, b) => b - a));
      const times = body.data.map((entry: { at: string }) => Date.parse(entry.at));
      expect(times).toEqual([...times].sort((a, b) => b - a));

      // Paged like the list: page and limit; a bad limit is a 422 naming it.
      const second = (await history(alice.token, dataId, '?page=2&limit=3')).json();
      expect(second).toMatchObject({ total: 7, page: 2, pages: 3 });
      expect(second.data.map((entry: { action: string }) => entry.action)).toEqual([
        'updated',
        'updated',
        'updated',
      ]);
      const bad = await history(alice.token, dataId, '?limit=101');
      expect(bad.statusCode).toBe(422);
      expect(bad.json().validationErrors).toEqual([
        { field: 'limit', rule: 'range', message: 'limit must be an integer from 1 to 100' },
      ]);
    });

    it('a refused change writes no entry', async () => {
      const [alice, bob] = s.users;
      const dataId = await submit(alice);
      const invalid = await send(alice.token, 'PATCH', `/api/data/${s.configId}/${dataId}`, { qty: 0 });
      expect(invalid.statusCode).toBe(400);
      expect((await remove(bob.token, dataId)).statusCode).toBe(403);
      expect((await history(alice.token, dataId)).json()).toMatchObject({
        total: 1,
        data: [{ action: 'created' }],
      });
    });

    it('a change whose entry cannot be written is not made (one statement)', async () => {
      const [alice] = s.users;
      const dataId = await submit(alice);
      const db = s.t.database.client.db;
      await db.execute(
        sql`alter table record_history add constraint test_no_updates check (action <> 'updated')`,
      );
      try {
        const patch = await send(alice.token, 'PATCH', `/api/data/${s.configId}/${dataId}`, { qty: 9 });
        expect(patch.statusCode).toBe(500);
      } finally {
        await db.execute(sql`alter table record_history drop constraint test_no_updates`);
      }
      const stored = await send(alice.token, 'GET', `/api/data/${s.configId}/${dataId}`);
      expect(stored.json().data).toEqual(ORDER);
      expect((await history(alice.token, dataId)).json().total).toBe(1);
    });

    it('a workflow save and its rollback name the run and the step', async () => {
      const [alice] = s.users;
      const strictId = await createConfig(s.t, s.admin, {
        title: 'Strict',
        schema: { type: 'object', required: ['zip'], properties: { zip: { type: 'string' } } },
        validationRules: [],
        computedRules: [],
      });
      const workflowId = await createSteps(s.t, s.admin, [
        { name: 'store', type: 'save', config: {} },
        { name: 'strict', type: 'validate', config: { configId: strictId }, onError: 'rollback' },
      ]);
      const body = await run(s.t, alice.token, workflowId, s.configId, ORDER);
      expect(body.status).toBe('rolled_back');
      const dataId = body.results.store.dataId;
      const origin = { kind: 'workflow', runId: body.runId, step: 'store' };

      // The rolled-back record is in the trash, so its owner (allowed to delete) reads its history.
      const response = await history(alice.token, dataId);
      expect(response.statusCode).toBe(200);
      expect(response.json().data).toEqual([
        expect.objectContaining({ action: 'deleted', userId: alice.user.id, origin, changes: {} }),
        expect.objectContaining({
          action: 'created',
          userId: alice.user.id,
          origin,
          changes: { name: { after: 'Ann' }, qty: { after: 2 }, price: { after: 3 } },
        }),
      ]);
    });

    it('a created entry holds each submitted field as `after`, exactly what the database builds from the stored data', async () => {
      const [alice] = s.users;
      const payload = {
        ...ORDER,
        city: 'Szeged "Tisza" \\ \u00e9 \u2028',
        extra: { nested: [1, 2.5, null, { deep: true }], empty: {} },
        nothing: null,
        list: [],
        '': 'empty key',
        '0': 'numeric key',
        'a.b': -0.000001,
        big: 123456789012345680000,
      };
      const dataId = await submit(alice, payload);

      const entries = (await history(alice.token, dataId)).json().data;
      expect(entries).toHaveLength(1);
      expect(entries[0].changes).toEqual(
        Object.fromEntries(Object.entries(payload).map(([field, value]) => [field, { after: value }])),
      );
      // The service builds the document (migration 0028); the database's own builder, which it
      // replaces on this path, gives the very same jsonb.
      const [row] = rowsOf(
        await s.t.database.client.db.execute(sql`select h.changes = fdws_added_fields(r.data) as same
          from record_history h join data_records r on r.id = h.record_id
          where h.record_id = ${dataId}::uuid and h.action = 'created'`),
      );
      expect(row).toEqual({ same: true });
    });

    it("the previous version's create (ten arguments, no changes) still writes its entry: a rolling upgrade", async () => {
      const [alice] = s.users;
      const [record] = rowsOf(
        await s.t.database.client.db.execute(sql`select id from fdws_insert_record(${s.configId}::uuid, 1,
          ${alice.user.id}::uuid, null::uuid, ${JSON.stringify(ORDER)}::jsonb, array['name', 'qty', 'price'],
          null::jsonb, null::text, ${alice.user.id}::uuid, null::jsonb)`),
      );
      const entries = (await history(alice.token, String(record.id))).json().data;
      expect(entries).toEqual([
        expect.objectContaining({
          action: 'created',
          userId: alice.user.id,
          changes: { name: { after: 'Ann' }, qty: { after: 2 }, price: { after: 3 } },
        }),
      ]);
    });

    it("is visible to whoever may read the record: not to another user, nor to another site's manager", async () => {
      const [alice, bob, manager] = s.users;
      const dataId = await submit(alice);
      expect((await history(alice.token, dataId)).statusCode).toBe(200);
      expect((await history(manager.token, dataId)).statusCode).toBe(200);
      expect((await history(s.admin, dataId)).statusCode).toBe(200);
      const other = await history(bob.token, dataId);
      expect(other.statusCode).toBe(404);
      expect(other.json().code).toBe('RECORD_NOT_FOUND');
      expect((await history(alice.token, 'not-a-uuid')).statusCode).toBe(404);

      // In the trash: its owner and admins, not a manager (who may not open others' trash).
      await remove(alice.token, dataId);
      expect((await history(alice.token, dataId)).statusCode).toBe(200);
      expect((await history(s.admin, dataId)).statusCode).toBe(200);
      expect((await history(manager.token, dataId)).statusCode).toBe(404);
    });

    it("a shared form's record: the trash and the history stay with the site it came through", async () => {
      const { siteA, siteB } = await createTwoSites(s.t, s.admin);
      const userA = await createUser(s.t, { siteId: siteA });
      const managerA = await createUser(s.t, { role: 'manager', siteId: siteA });
      const managerB = await createUser(s.t, { role: 'manager', siteId: siteB });
      const saved = await send(userA.token, 'POST', `/api/data/${s.configId}`, ORDER, onA);
      const dataId = saved.json().dataId;
      const get = (url: string, token: string, headers: Record<string, string>) =>
        send(token, 'GET', url, undefined, headers);

      expect((await get(`/api/data/${s.configId}/${dataId}/history`, managerA.token, onA)).statusCode).toBe(
        200,
      );
      const foreign = await get(`/api/data/${s.configId}/${dataId}/history`, managerB.token, onB);
      expect(foreign.statusCode).toBe(404);
      expect(foreign.json().code).toBe('RECORD_NOT_FOUND');

      await send(userA.token, 'DELETE', `/api/data/${s.configId}/${dataId}`, undefined, onA);
      expect((await get(`/api/data/${s.configId}?deleted=true`, userA.token, onA)).json().total).toBe(1);
      // A site's manager holds deleteOwnResults: another site's manager sees none of this trash.
      expect((await get(`/api/data/${s.configId}?deleted=true`, managerB.token, onB)).json().total).toBe(0);
      const restoreOnB = await send(
        managerB.token,
        'POST',
        `/api/data/${s.configId}/${dataId}/restore`,
        undefined,
        onB,
      );
      expect(restoreOnB.statusCode).toBe(404);
    });
  });
});
