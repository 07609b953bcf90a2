import { sql } from 'drizzle-orm';
import { RecordTrashPurge } from '../../src/data/record-trash-purge';
import { rowsOf } from '../../src/database/raw-rows';
import { createConfig } from '../factories/config.factory';
import { createUser, type TestUser } from '../factories/user.factory';
import { useAppSuite } from '../utils/app-suite';
import type { TestApp } from '../utils/test-app';
import { createSteps, run } from '../utils/workflow-api';
import { createSite } from '../factories/site.factory';

const ORDER = { name: 'Ann', qty: 2, price: 3 };
const FORM = 'application/x-www-form-urlencoded';
const DAY = 86_400_000;

/**
 * Record lifecycle: a deleted record goes to a trash (listed with `deleted=true`, restorable
 * until RECORD_TRASH_DAYS, then purged), and every change of a record appends to its history.
 */
describe('record lifecycle: trash, restore, purge and history', () => {
  let t: TestApp;
  let admin: string;
  let alice: TestUser;
  let bob: TestUser;
  let manager: TestUser;
  let configId: string;

  useAppSuite(
    (suite) =>
      ({
        t,
        admin,
        users: [alice, bob, manager],
        configId,
      } = suite),
    { env: { RECORD_TRASH_DAYS: '7' }, users: [{}, {}, { role: 'manager' }], forms: 1 },
  );

  const submit = async (user: TestUser, payload: object = ORDER, config = configId) => {
    const response = await t.request({
      method: 'POST',
      url: `/api/data/${config}`,
      token: user.token,
      payload,
    });
    expect(response.statusCode).toBe(201);
    return response.json().dataId as string;
  };
  const remove = (token: string, dataId: string, config = configId) =>
    t.request({ method: 'DELETE', url: `/api/data/${config}/${dataId}`, token });
  const restore = (token: string, dataId: string, config = configId) =>
    t.request({ method: 'POST', url: `/api/data/${config}/${dataId}/restore`, token });
  const list = (token: string, query = '', config = configId) =>
    t.request({ method: 'GET', url: `/api/data/${config}${query}`, token });
  const history = (token: string, dataId: string, query = '', config = configId) =>
    t.request({ method: 'GET', url: `/api/data/${config}/${dataId}/history${query}`, token });
  const idsOf = (response: { json(): { data: { _id: string }[] } }) =>
    response
      .json()
      .data.map((record) => record._id)
      .sort();
  const purge = (cutoff?: Date) => t.app.get(RecordTrashPurge).purge(cutoff);
  /** Moves a record's time in the trash back by `days` (the clock of the purge, without waiting). */
  const ageInTrash = (dataId: string, days: number) =>
    t.database.client.db.execute(
      sql`update data_records set deleted_at = deleted_at - ${`${days} days`}::interval where id = ${dataId}::uuid`,
    );
  const storedRecord = async (dataId: string) =>
    rowsOf(
      await t.database.client.db.execute(sql`select id from data_records where id = ${dataId}::uuid`),
    )[0];

  describe('the trash', () => {
    it('lists deleted records to whoever may delete there: the owner their own, admins all; others 403', async () => {
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
      expect(idsOf(await list(admin, '?deleted=true'))).toEqual([mine, theirs].sort());
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
      const noDelete = await createConfig(t, admin, {
        preferences: { saveLimit: null, allowEdit: true, allowDelete: false, storeComputedResults: true },
      });
      const refused = await list(alice.token, '?deleted=true', noDelete);
      expect(refused.statusCode).toBe(403);
      expect(refused.json()).toMatchObject({
        code: 'FORBIDDEN',
        error: 'This form does not allow deleting submissions.',
      });
      expect((await list(admin, '?deleted=true', noDelete)).statusCode).toBe(200);

      await t.request({
        method: 'PUT',
        url: `/api/permissions/${configId}`,
        token: admin,
        payload: { roles: { user: ['viewForm', 'viewOwnResults'] } },
      });
      const without = await list(alice.token, '?deleted=true&take=5');
      expect(without.statusCode).toBe(403);
      expect(without.json().code).toBe('FORBIDDEN');
      expect((await list(alice.token)).statusCode).toBe(200);
    });

    it('export, statistics and lists keep excluding the trash', async () => {
      const active = await submit(alice, { ...ORDER, name: 'Active' });
      const deleted = await submit(alice, { ...ORDER, name: 'Deleted' });
      await remove(alice.token, deleted);

      const exported = await t.request({ method: 'GET', url: `/api/data/${configId}/export`, token: admin });
      expect(exported.json().map((record: { _id: string }) => record._id)).toEqual([active]);
      const csv = await t.request({
        method: 'GET',
        url: `/api/data/${configId}/export?format=csv`,
        token: admin,
      });
      expect(csv.body).toContain('Active');
      expect(csv.body).not.toContain('Deleted');
      const stats = await t.request({ method: 'GET', url: `/api/data/${configId}/stats`, token: admin });
      expect(stats.json()).toMatchObject({ total: 1, byUser: [{ userId: alice.user.id, count: 1 }] });
      expect(idsOf(await list(admin))).toEqual([active]);
      expect((await list(admin, '?take=10&requireTotalCount=true')).json().totalCount).toBe(1);
      expect(
        (await t.request({ method: 'GET', url: `/api/data/${configId}/${deleted}`, token: admin }))
          .statusCode,
      ).toBe(404);
    });
  });

  describe('restore', () => {
    it('brings a deleted record back (200), as the owner or an admin; someone else is refused', async () => {
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
      expect((await restore(admin, '00000000-0000-4000-8000-000000000000')).statusCode).toBe(404);
      expect((await restore(admin, 'not-a-uuid')).statusCode).toBe(404);

      await remove(alice.token, dataId);
      expect((await restore(admin, dataId)).json()).toMatchObject({ _id: dataId, isActive: true });
    });

    it("409 DATA_RESTORE_LIMIT_REACHED when the owner's active records fill the save limit", async () => {
      const limited = await createConfig(t, admin, {
        preferences: { saveLimit: 1, allowEdit: true, allowDelete: true, storeComputedResults: true },
      });
      const first = await submit(alice, ORDER, limited);
      await remove(alice.token, first, limited);
      const second = await submit(alice, ORDER, limited);

      const refused = await restore(alice.token, first, limited);
      expect(refused.statusCode).toBe(409);
      expect(refused.json()).toMatchObject({
        code: 'DATA_RESTORE_LIMIT_REACHED',
        error: 'Restoring this record would exceed the limit of 1 submissions for this form.',
        details: { limit: 1 },
      });
      // An admin restoring it is held to the owner's limit too; the record stays in the trash.
      expect((await restore(admin, first, limited)).statusCode).toBe(409);
      expect(idsOf(await list(alice.token, '?deleted=true', limited))).toEqual([first]);

      await remove(alice.token, second, limited);
      expect((await restore(alice.token, first, limited)).statusCode).toBe(200);
    });

    it('concurrent restores within a save limit of 1: exactly one succeeds', async () => {
      const limited = await createConfig(t, admin, {
        preferences: { saveLimit: 1, allowEdit: true, allowDelete: true, storeComputedResults: true },
      });
      const first = await submit(alice, ORDER, limited);
      await remove(alice.token, first, limited);
      const second = await submit(alice, ORDER, limited);
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
      expect(idsOf(await list(admin, '?deleted=true'))).toEqual([recent]);

      const kept = await history(admin, old);
      expect(kept.statusCode).toBe(200);
      expect(kept.json()).toMatchObject({ total: 2, data: [{ action: 'deleted' }, { action: 'created' }] });
      // Decided: a purged record's history is the admins'; its owner gets the 404 of a missing record.
      expect((await history(alice.token, old)).statusCode).toBe(404);
      expect((await history(admin, '00000000-0000-4000-8000-000000000000')).statusCode).toBe(404);

      // A cutoff in the future purges what is in the trash now.
      expect(await purge(new Date(Date.now() + DAY))).toBe(1);
      expect((await restore(alice.token, recent)).statusCode).toBe(404);
    });
  });

  describe('history', () => {
    const route = (value: string) => ({ kind: 'route', route: value });

    it('every create, update (PUT, PATCH, grid store), delete (route, grid store) and restore, newest first', async () => {
      const dataId = await submit(alice, { name: 'Ann', qty: 2, price: 3 });
      const patch = await t.request({
        method: 'PATCH',
        url: `/api/data/${configId}/${dataId}`,
        token: alice.token,
        payload: { qty: 4 },
      });
      expect(patch.statusCode).toBe(200);
      const put = await t.request({
        method: 'PUT',
        url: `/api/data/${configId}/${dataId}`,
        token: alice.token,
        payload: { name: 'Ann', qty: 4, city: 'Pécs' },
      });
      expect(put.statusCode).toBe(200);
      const store = await t.request({
        method: 'PUT',
        url: `/api/data/${configId}`,
        token: alice.token,
        headers: { 'content-type': FORM },
        payload: new URLSearchParams({
          key: dataId,
          values: JSON.stringify({ 'data.city': 'Győr' }),
        }).toString(),
      });
      expect(store.statusCode).toBe(200);
      expect((await remove(alice.token, dataId)).statusCode).toBe(200);
      expect((await restore(alice.token, dataId)).statusCode).toBe(200);
      const storeDelete = await t.request({
        method: 'DELETE',
        url: `/api/data/${configId}`,
        token: alice.token,
        headers: { 'content-type': FORM },
        payload: new URLSearchParams({ key: dataId }).toString(),
      });
      expect(storeDelete.statusCode).toBe(200);

      const response = await history(alice.token, dataId);
      expect(response.statusCode).toBe(200);
      const body = response.json();
      expect(body).toMatchObject({ total: 7, page: 1, pages: 1 });
      const common = { recordId: dataId, configId, userId: alice.user.id, configVersion: 1 };
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
      const dataId = await submit(alice);
      const invalid = await t.request({
        method: 'PATCH',
        url: `/api/data/${configId}/${dataId}`,
        token: alice.token,
        payload: { qty: 0 },
      });
      expect(invalid.statusCode).toBe(400);
      expect((await remove(bob.token, dataId)).statusCode).toBe(403);
      expect((await history(alice.token, dataId)).json()).toMatchObject({
        total: 1,
        data: [{ action: 'created' }],
      });
    });

    it('a change whose entry cannot be written is not made (one statement)', async () => {
      const dataId = await submit(alice);
      const db = t.database.client.db;
      await db.execute(
        sql`alter table record_history add constraint test_no_updates check (action <> 'updated')`,
      );
      try {
        const patch = await t.request({
          method: 'PATCH',
          url: `/api/data/${configId}/${dataId}`,
          token: alice.token,
          payload: { qty: 9 },
        });
        expect(patch.statusCode).toBe(500);
      } finally {
        await db.execute(sql`alter table record_history drop constraint test_no_updates`);
      }
      const stored = await t.request({
        method: 'GET',
        url: `/api/data/${configId}/${dataId}`,
        token: alice.token,
      });
      expect(stored.json().data).toEqual(ORDER);
      expect((await history(alice.token, dataId)).json().total).toBe(1);
    });

    it('a workflow save and its rollback name the run and the step', async () => {
      const strictId = await createConfig(t, admin, {
        title: 'Strict',
        schema: { type: 'object', required: ['zip'], properties: { zip: { type: 'string' } } },
        validationRules: [],
        computedRules: [],
      });
      const workflowId = await createSteps(t, admin, [
        { name: 'store', type: 'save', config: {} },
        { name: 'strict', type: 'validate', config: { configId: strictId }, onError: 'rollback' },
      ]);
      const body = await run(t, alice.token, workflowId, configId, ORDER);
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

    it("is visible to whoever may read the record: not to another user, nor to another site's manager", async () => {
      const dataId = await submit(alice);
      expect((await history(alice.token, dataId)).statusCode).toBe(200);
      expect((await history(manager.token, dataId)).statusCode).toBe(200);
      expect((await history(admin, dataId)).statusCode).toBe(200);
      const other = await history(bob.token, dataId);
      expect(other.statusCode).toBe(404);
      expect(other.json().code).toBe('RECORD_NOT_FOUND');
      expect((await history(alice.token, 'not-a-uuid')).statusCode).toBe(404);

      // In the trash: its owner and admins, not a manager (who may not open others' trash).
      await remove(alice.token, dataId);
      expect((await history(alice.token, dataId)).statusCode).toBe(200);
      expect((await history(admin, dataId)).statusCode).toBe(200);
      expect((await history(manager.token, dataId)).statusCode).toBe(404);
    });

    it("a shared form's record: the trash and the history stay with the site it came through", async () => {
      const siteA = await createSite(t, admin, 'Alpha', 'alpha.example.com');
      const siteB = await createSite(t, admin, 'Beta', 'beta.example.com');
      const userA = await createUser(t, { siteId: siteA });
      const managerA = await createUser(t, { role: 'manager', siteId: siteA });
      const managerB = await createUser(t, { role: 'manager', siteId: siteB });
      const onA = { host: 'alpha.example.com' };
      const onB = { host: 'beta.example.com' };
      const saved = await t.request({
        method: 'POST',
        url: `/api/data/${configId}`,
        token: userA.token,
        headers: onA,
        payload: ORDER,
      });
      const dataId = saved.json().dataId;
      const get = (url: string, token: string, headers: Record<string, string>) =>
        t.request({ method: 'GET', url, token, headers });

      expect((await get(`/api/data/${configId}/${dataId}/history`, managerA.token, onA)).statusCode).toBe(
        200,
      );
      const foreign = await get(`/api/data/${configId}/${dataId}/history`, managerB.token, onB);
      expect(foreign.statusCode).toBe(404);
      expect(foreign.json().code).toBe('RECORD_NOT_FOUND');

      await t.request({
        method: 'DELETE',
        url: `/api/data/${configId}/${dataId}`,
        token: userA.token,
        headers: onA,
      });
      expect((await get(`/api/data/${configId}?deleted=true`, userA.token, onA)).json().total).toBe(1);
      // A site's manager holds deleteOwnResults: another site's manager sees none of this trash.
      expect((await get(`/api/data/${configId}?deleted=true`, managerB.token, onB)).json().total).toBe(0);
      const restoreOnB = await t.request({
        method: 'POST',
        url: `/api/data/${configId}/${dataId}/restore`,
        token: managerB.token,
        headers: onB,
      });
      expect(restoreOnB.statusCode).toBe(404);
    });
  });
});
