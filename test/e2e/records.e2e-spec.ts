import { sql } from 'drizzle-orm';
import { createConfig, ORDER_FORM } from '../factories/config.factory';
import { useAppSuite } from '../utils/app-suite';
import { errorBody } from '../utils/error-body';
import { createdAnswer } from '../utils/record-answers';
import { requestAs, type Call } from '../utils/request-as';

describe('records', () => {
  /** alice, bob and a manager. */
  const s = useAppSuite({
    users: [{ email: 'alice@example.com' }, { email: 'bob@example.com' }, { role: 'manager' }],
  });

  const send = (...call: Call) => requestAs(s.t, ...call);
  const submit = (token: string, configId: string, payload: unknown, query = '') =>
    send(token, 'POST', `/api/data/${configId}${query}`, payload);

  describe('create', () => {
    it('stores a valid record with computed results and answers 201 in the spec shape', async () => {
      const [alice] = s.users;
      const configId = await createConfig(s.t, s.admin);
      const response = await submit(alice.token, configId, { name: 'Widget', qty: 3, price: 50 });
      expect(response.statusCode).toBe(201);
      const body = response.json();
      expect(body).toEqual(
        createdAnswer(body.dataId, {
          configId,
          userId: alice.user.id,
          data: { name: 'Widget', qty: 3, price: 50 },
          computedResults: { total: 150, bigOrder: true },
        }),
      );
      expect(response.headers.etag).toBe('"1"');
    });

    it('does not store computed results when storeComputedResults is false', async () => {
      const [alice] = s.users;
      const configId = await createConfig(s.t, s.admin, { preferences: { storeComputedResults: false } });
      const body = (await submit(alice.token, configId, { name: 'W', qty: 1, price: 2 })).json();
      expect(body.computedResults).toEqual({ total: 2, bigOrder: false });
      expect(body.data.computedResults).toBeUndefined();
    });

    it('404 for an unknown, malformed or deleted configuration', async () => {
      const [alice] = s.users;
      const configId = await createConfig(s.t, s.admin);
      expect(
        (await submit(alice.token, '00000000-0000-4000-8000-000000000000', { name: 'x', qty: 1 })).statusCode,
      ).toBe(404);
      expect((await submit(alice.token, 'not-a-uuid', { name: 'x', qty: 1 })).json().code).toBe(
        'CONFIG_NOT_FOUND',
      );
      await send(s.admin, 'DELETE', `/api/configs/${configId}`);
      expect((await submit(alice.token, configId, { name: 'x', qty: 1 })).statusCode).toBe(404);
    });

    it('400 with validationErrors (schema errors first, then rules), localized with ?lang=hu', async () => {
      const [alice] = s.users;
      const configId = await createConfig(s.t, s.admin);
      const response = await submit(alice.token, configId, { qty: 0 });
      expect(response.statusCode).toBe(400);
      const body = response.json();
      expect(body).toMatchObject(
        errorBody(400, 'DATA_VALIDATION_FAILED', 'The submitted data is not valid.'),
      );
      expect(body.validationErrors).toEqual([
        { field: 'name', rule: 'required', message: 'must have required property name' },
        { field: 'qty', rule: 'minimum', message: 'must be >= 1' },
      ]);
      expect(body.fieldResults.qty).toEqual({ valid: false, errors: ['must be >= 1'] });
      expect(body.fieldResults.price).toEqual({ valid: true, errors: [] });

      const rule = (await submit(alice.token, configId, { name: 'x', qty: 101 }, '?lang=hu')).json();
      expect(rule.error).toBe('A beküldött adatok érvénytelenek.');
      expect(rule.validationErrors).toEqual([
        { field: 'qty', rule: 'maxQty', message: 'Legfeljebb 100 darab' },
      ]);
      const schemaHu = (await submit(alice.token, configId, { name: 'x' }, '?locale=hu')).json();
      expect(schemaHu.validationErrors).toEqual([
        { field: 'qty', rule: 'required', message: 'kell legyen qty tulajdonsága' },
      ]);
    });

    it('422 for a body that is not an object', async () => {
      const [alice] = s.users;
      const configId = await createConfig(s.t, s.admin);
      const response = await submit(alice.token, configId, [1, 2]);
      expect(response.statusCode).toBe(422);
      expect(response.json().code).toBe('VALIDATION_FAILED');
    });

    it('enforces saveLimit with a localized message and counts only active records', async () => {
      const [alice, bob] = s.users;
      const configId = await createConfig(s.t, s.admin, { preferences: { saveLimit: 2, allowEdit: false } });
      const first = (await submit(alice.token, configId, { name: 'a', qty: 1 })).json();
      expect((await submit(alice.token, configId, { name: 'b', qty: 1 })).statusCode).toBe(201);
      const refused = await submit(alice.token, configId, { name: 'c', qty: 1 });
      expect(refused.statusCode).toBe(400);
      const limitOf2 = 'You have reached the limit of 2 submissions for this form.';
      expect(refused.json()).toEqual(
        errorBody(400, 'DATA_SAVE_LIMIT_REACHED', limitOf2, { details: { limit: 2 } }),
      );
      const hu = await submit(alice.token, configId, { name: 'c', qty: 1 }, '?lang=hu');
      expect(hu.json().error).toBe('Elérte az űrlaphoz tartozó 2 beküldéses korlátot.');
      // Another user has their own allowance.
      expect((await submit(bob.token, configId, { name: 'b', qty: 1 })).statusCode).toBe(201);
      // A soft-deleted record no longer counts.
      expect((await send(alice.token, 'DELETE', `/api/data/${configId}/${first.dataId}`)).statusCode).toBe(
        200,
      );
      expect((await submit(alice.token, configId, { name: 'd', qty: 1 })).statusCode).toBe(201);
    });

    it('with saveLimit 1 and allowEdit, the refusal names the earlier record to edit', async () => {
      const [alice] = s.users;
      const configId = await createConfig(s.t, s.admin, { preferences: { saveLimit: 1, allowEdit: true } });
      const first = (await submit(alice.token, configId, { name: 'a', qty: 1 })).json();
      const refused = (await submit(alice.token, configId, { name: 'b', qty: 1 })).json();
      expect(refused.details).toEqual({ limit: 1, existingDataId: first.dataId });
    });

    it('20 concurrent creates against saveLimit 1 store exactly one record', async () => {
      const [alice] = s.users;
      const configId = await createConfig(s.t, s.admin, { preferences: { saveLimit: 1 } });
      const responses = await Promise.all(
        Array.from({ length: 20 }, (_, i) => submit(alice.token, configId, { name: `n${i}`, qty: 1 })),
      );
      const statuses = responses.map((r) => r.statusCode).sort();
      expect(statuses.filter((s) => s === 201)).toHaveLength(1);
      expect(statuses.filter((s) => s === 400)).toHaveLength(19);
      const result: any = await s.t.database.client.db.execute(
        sql`select count(*)::int as n from data_records where config_id = ${configId} and is_active`,
      );
      expect(result.rows[0].n).toBe(1);
    });

    it('copies siteId from the configuration', async () => {
      const [alice] = s.users;
      const site: any = await s.t.database.client.db.execute(
        sql`insert into sites (name, domains) values ('Shop', '["shop.example.com"]') returning id`,
      );
      const siteId = site.rows[0].id;
      const configId = await createConfig(s.t, s.admin, { siteId });
      const response = await send(
        alice.token,
        'POST',
        `/api/data/${configId}`,
        { name: 'x', qty: 1 },
        { host: 'shop.example.com' },
      );
      expect(response.statusCode).toBe(201);
      expect(response.json().data.siteId).toBe(siteId);
      // The same configuration does not exist for another host.
      expect((await submit(alice.token, configId, { name: 'x', qty: 1 })).statusCode).toBe(404);
    });
  });

  describe('read, update, delete', () => {
    let configId: string;
    let aliceRecord: string;
    beforeEach(async () => {
      const [alice] = s.users;
      configId = await createConfig(s.t, s.admin);
      aliceRecord = (await submit(alice.token, configId, { name: 'mine', qty: 2, price: 1 })).json().dataId;
    });

    it('GET one: the owner, a manager and an admin see it; another user gets 404', async () => {
      const [alice, bob, manager] = s.users;
      const get = (token: string) => send(token, 'GET', `/api/data/${configId}/${aliceRecord}`);
      const own = await get(alice.token);
      expect(own.statusCode).toBe(200);
      expect(own.json()).toMatchObject({
        _id: aliceRecord,
        data: { name: 'mine', qty: 2, price: 1 },
        workflow: [],
      });
      expect((await get(manager.token)).statusCode).toBe(200);
      expect((await get(s.admin)).statusCode).toBe(200);
      expect((await get(bob.token)).json()).toEqual(errorBody(404, 'RECORD_NOT_FOUND', 'Record not found.'));
    });

    it('PUT replaces data, re-validates and recomputes; only the owner or an admin may', async () => {
      const [alice, bob, manager] = s.users;
      const put = (token: string, payload: object) =>
        send(token, 'PUT', `/api/data/${configId}/${aliceRecord}`, payload);
      const updated = await put(alice.token, { name: 'changed', qty: 4, price: 30 });
      expect(updated.statusCode).toBe(200);
      expect(updated.json()).toMatchObject({
        success: true,
        dataId: aliceRecord,
        computedResults: { total: 120, bigOrder: true },
        data: {
          data: { name: 'changed', qty: 4, price: 30 },
          computedResults: { total: 120, bigOrder: true },
        },
      });
      expect((await put(alice.token, { name: 'x', qty: 500 })).statusCode).toBe(400);
      expect((await put(bob.token, { name: 'x', qty: 1 })).statusCode).toBe(404);
      expect((await put(manager.token, { name: 'x', qty: 1 })).statusCode).toBe(403);
      expect((await put(s.admin, { name: 'by admin', qty: 1 })).statusCode).toBe(200);
    });

    it('returns data in the submitted key order from create, GET, the list and the grid; PUT reorders', async () => {
      const [alice] = s.users;
      const keys = (record: { data: object }) => Object.keys(record.data);
      const order = ['price', 'city', 'name', 'note', 'qty'];
      const created = await submit(alice.token, configId, {
        price: 1,
        city: 'Pécs',
        name: 'ordered',
        note: 'n',
        qty: 2,
      });
      expect(keys(created.json().data)).toEqual(order);
      const id = created.json().dataId;
      const get = () => send(alice.token, 'GET', `/api/data/${configId}/${id}`);
      expect(keys((await get()).json())).toEqual(order);
      const list = await send(alice.token, 'GET', `/api/data/${configId}?sortBy=createdAt`);
      expect(keys(list.json().data.find((r: { _id: string }) => r._id === id))).toEqual(order);
      const grid = await send(alice.token, 'GET', `/api/data/${configId}?skip=0&take=5`);
      expect(keys(grid.json().data.find((r: { _id: string }) => r._id === id))).toEqual(order);
      const put = await send(alice.token, 'PUT', `/api/data/${configId}/${id}`, {
        qty: 3,
        name: 'reordered',
        tags: ['x'],
      });
      expect(put.statusCode).toBe(200);
      expect(keys(put.json().data)).toEqual(['qty', 'name', 'tags']);
      expect(keys((await get()).json())).toEqual(['qty', 'name', 'tags']);
    });

    it('PUT is refused when the form does not allow editing', async () => {
      const [alice] = s.users;
      await send(s.admin, 'PUT', `/api/configs/${configId}`, { preferences: { allowEdit: false } });
      const response = await send(alice.token, 'PUT', `/api/data/${configId}/${aliceRecord}`, {
        name: 'x',
        qty: 1,
      });
      expect(response.statusCode).toBe(403);
    });

    it('DELETE: 404 unknown, 403 for another user, soft delete for the owner, then invisible', async () => {
      const [alice, bob] = s.users;
      const del = (token: string, id = aliceRecord) => send(token, 'DELETE', `/api/data/${configId}/${id}`);
      expect((await del(alice.token, '00000000-0000-4000-8000-000000000000')).statusCode).toBe(404);
      const foreign = await del(bob.token);
      expect(foreign.statusCode).toBe(403);
      expect(foreign.json()).toEqual(
        errorBody(403, 'FORBIDDEN', 'You are not authorized to change this record.'),
      );
      const deleted = await del(alice.token);
      expect(deleted.statusCode).toBe(200);
      expect(deleted.json()).toMatchObject({ _id: aliceRecord, isActive: false });
      expect((await send(alice.token, 'GET', `/api/data/${configId}/${aliceRecord}`)).statusCode).toBe(404);
      expect((await del(alice.token)).statusCode).toBe(404);
      const list = (await send(s.admin, 'GET', `/api/data/${configId}`)).json();
      expect(list.total).toBe(0);
      const stats = (await send(s.admin, 'GET', `/api/data/${configId}/stats`)).json();
      expect(stats.total).toBe(0);
      const row: any = await s.t.database.client.db.execute(
        sql`select is_active from data_records where id = ${aliceRecord}`,
      );
      expect(row.rows[0].is_active).toBe(false);
    });

    it('DELETE is refused when the form does not allow deletion', async () => {
      const [alice] = s.users;
      await send(s.admin, 'PUT', `/api/configs/${configId}`, { preferences: { allowDelete: false } });
      expect((await send(alice.token, 'DELETE', `/api/data/${configId}/${aliceRecord}`)).statusCode).toBe(
        403,
      );
    });
  });

  describe('paging list', () => {
    let configId: string;
    beforeEach(async () => {
      const [alice, bob] = s.users;
      configId = await createConfig(s.t, s.admin, { schema: null, validationRules: [], computedRules: [] });
      const rows = [
        { name: 'Anna', city: 'Paris', qty: 5 },
        { name: 'Béla', city: 'Budapest', qty: 12 },
        { name: 'Cecil', city: 'Paris', qty: 3 },
        { name: 'Dóra', city: 'Wien', qty: '12' },
        { name: 'Emil', qty: 7 },
      ];
      for (const row of rows) await submit(alice.token, configId, row);
      await submit(bob.token, configId, { name: 'Bob', city: 'Paris', qty: 1 });
    });
    const list = (token: string, query = '') => send(token, 'GET', `/api/data/${configId}${query}`);

    it('pages with total and pages = ceil(total/limit), newest first by default', async () => {
      const body = (await list(s.admin, '?limit=4&page=2')).json();
      expect(body).toMatchObject({ total: 6, page: 2, pages: 2 });
      expect(body.data.map((r: any) => r.data.name)).toEqual(['Béla', 'Anna']);
      const first = (await list(s.admin, '?limit=4')).json();
      expect(first.data.map((r: any) => r.data.name)).toEqual(['Bob', 'Emil', 'Dóra', 'Cecil']);
      expect((await list(s.admin, '?limit=1000')).json()).toMatchObject({ total: 6, page: 1, pages: 1 });
    });

    it('a user holding only viewOwnResults sees only their own records; a manager sees all', async () => {
      const [alice, bob, manager] = s.users;
      expect((await list(bob.token)).json()).toMatchObject({ total: 1, pages: 1 });
      expect((await list(alice.token)).json().total).toBe(5);
      expect((await list(manager.token)).json().total).toBe(6);
    });

    it('filters on string and number fields, as JSON or as filters[x]=v', async () => {
      const names = async (query: string) =>
        (await list(s.admin, query))
          .json()
          .data.map((r: any) => r.data.name)
          .sort();
      expect(await names(`?filters=${encodeURIComponent('{"city":"Paris"}')}`)).toEqual([
        'Anna',
        'Bob',
        'Cecil',
      ]);
      expect(await names(`?filters=${encodeURIComponent('{"qty":12}')}`)).toEqual(['Béla']);
      expect(await names(`?filters[qty]=12`)).toEqual(['Béla', 'Dóra']);
      expect(await names(`?filters[city]=Paris&filters[qty]=3`)).toEqual(['Cecil']);
      expect(await names(`?filters=${encodeURIComponent('{"city":"Nowhere"}')}`)).toEqual([]);
    });

    it('sorts by a data field both ways, numbers numerically', async () => {
      const names = async (query: string) =>
        (await list(s.admin, query)).json().data.map((r: any) => r.data.name);
      expect(await names('?sortBy=qty&sortOrder=asc')).toEqual([
        'Bob',
        'Cecil',
        'Anna',
        'Emil',
        'Béla',
        'Dóra',
      ]);
      expect(await names('?sortBy=data.qty&sortOrder=desc')).toEqual([
        'Dóra',
        'Béla',
        'Emil',
        'Anna',
        'Cecil',
        'Bob',
      ]);
      expect(await names('?sortBy=name&sortOrder=asc')).toEqual([
        'Anna',
        'Bob',
        'Béla',
        'Cecil',
        'Dóra',
        'Emil',
      ]);
    });

    it('refuses bad paging values and injection attempts with a 422, changing nothing', async () => {
      for (const query of [
        '?page=0',
        '?limit=1001',
        '?limit=abc',
        '?sortOrder=sideways',
        '?sortBy=name;drop table data_records',
        '?sortBy=data.__proto__',
        `?filters=${encodeURIComponent('{"city\') or 1=1 --":"x"}')}`,
        `?filters=${encodeURIComponent('{"city":{"$gt":""}}')}`,
        '?filters=not-json',
        `?filters[a'b]=1`,
      ]) {
        const response = await list(s.admin, query);
        expect({ query, status: response.statusCode, code: response.json().code }).toEqual({
          query,
          status: 422,
          code: 'VALIDATION_FAILED',
        });
      }
      expect((await list(s.admin)).json().total).toBe(6);
    });
  });

  describe('config fixture', () => {
    it('is the form used above', () => {
      expect(ORDER_FORM.preferences.storeComputedResults).toBe(true);
    });
  });
});
