import { sql } from 'drizzle-orm';
import { rowsOf } from '../../src/database/raw-rows';
import { createConfig } from '../factories/config.factory';
import { useAppSuite } from '../utils/app-suite';
import { createdAnswer } from '../utils/record-answers';
import { requestAs } from '../utils/request-as';

/**
 * docs/grid-protocol.md section 16: the requests a stock `devextreme-aspnet-data` store sends for a DataGrid
 * with editing on (jQuery form encoding: `application/x-www-form-urlencoded; charset=UTF-8`, spaces as
 * `+`), and PATCH for JSON clients.
 */
describe('editing through the grid-library store', () => {
  /** alice, bob and a manager; an order form. */
  const s = useAppSuite({
    users: [{ email: 'alice@example.com' }, { email: 'bob@example.com' }, { role: 'manager' }],
    forms: 1,
  });

  const FORM = 'application/x-www-form-urlencoded; charset=UTF-8';
  const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
  const send = (
    method: 'POST' | 'PUT' | 'DELETE',
    token: string,
    payload: string,
    url = `/api/data/${s.configId}`,
  ) => requestAs(s.t, token, method, url, payload, { 'content-type': FORM });
  const insert = (token: string, values: object) =>
    send('POST', token, form({ values: JSON.stringify(values) }));
  const update = (token: string, key: string, values: object) =>
    send('PUT', token, form({ key, values: JSON.stringify(values) }));
  const remove = (token: string, key: string) => send('DELETE', token, form({ key }));
  const stored = async () =>
    rowsOf(
      await s.t.database.client.db.execute(
        sql`select data, is_active as "isActive" from data_records order by created_at`,
      ),
    ).map((row) => ({ data: row.data, isActive: row.isActive }));

  it('insert: values=<JSON> with data.<field> keys creates the record and answers like create', async () => {
    const [alice] = s.users;
    const response = await insert(alice.token, { 'data.name': 'Jane Doe', 'data.qty': 3, 'data.price': 50 });
    expect(response.statusCode).toBe(201);
    const body = response.json();
    expect(body).toEqual(
      createdAnswer(body.dataId, {
        configId: s.configId,
        userId: alice.user.id,
        data: { name: 'Jane Doe', qty: 3, price: 50 },
        computedResults: { total: 150, bigOrder: true },
      }),
    );
    // The nested form a grid builds for `data.<field>` columns is unwrapped the same way.
    const nested = await insert(alice.token, { data: { name: 'Nested', qty: 1 } });
    expect(nested.statusCode).toBe(201);
    expect(nested.json().data.data).toEqual({ name: 'Nested', qty: 1 });
    expect((await stored()).map((row) => row.data)).toEqual([
      { name: 'Jane Doe', qty: 3, price: 50 },
      { name: 'Nested', qty: 1 },
    ]);
    // Validation and the form's rules apply as for a JSON create.
    const invalid = await insert(alice.token, { 'data.qty': 0 });
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json().code).toBe('DATA_VALIDATION_FAILED');
  });

  it('update: key=<id>&values=<changed fields> merges into data, re-validates and recomputes', async () => {
    const [alice, bob, manager] = s.users;
    const id = (await insert(alice.token, { 'data.name': 'Jane', 'data.qty': 3, 'data.price': 50 })).json()
      .dataId;
    const response = await update(alice.token, id, { 'data.qty': 4 });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({
      success: true,
      dataId: id,
      computedResults: { total: 200, bigOrder: true },
      data: { _id: id, data: { name: 'Jane', qty: 4, price: 50 } },
    });
    expect(Object.keys(response.json().data.data)).toEqual(['name', 'qty', 'price']);
    const invalid = await update(alice.token, id, { 'data.qty': 500 });
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json().code).toBe('DATA_VALIDATION_FAILED');
    expect((await update(bob.token, id, { 'data.qty': 1 })).json().code).toBe('RECORD_NOT_FOUND');
    expect((await update(manager.token, id, { 'data.qty': 1 })).statusCode).toBe(403);
    expect((await update(s.admin, id, { 'data.name': 'By admin' })).statusCode).toBe(200);
    expect((await stored())[0].data).toEqual({ name: 'By admin', qty: 4, price: 50 });
    expect(
      (await update(alice.token, '00000000-0000-4000-8000-000000000000', { 'data.qty': 1 })).statusCode,
    ).toBe(404);
  });

  it('update is refused when the form does not allow editing; remove when it does not allow deletion', async () => {
    const [alice] = s.users;
    const locked = await createConfig(s.t, s.admin, {
      preferences: { allowEdit: false, allowDelete: false },
    });
    const url = `/api/data/${locked}`;
    const id = (
      await send('POST', alice.token, form({ values: '{"data.name":"x","data.qty":1}' }), url)
    ).json().dataId;
    const edit = await send('PUT', alice.token, form({ key: id, values: '{"data.qty":2}' }), url);
    expect(edit.statusCode).toBe(403);
    expect((await send('DELETE', alice.token, form({ key: id }), url)).statusCode).toBe(403);
  });

  it('remove: key=<id> soft-deletes with the rules of DELETE', async () => {
    const [alice, bob] = s.users;
    const id = (await insert(alice.token, { 'data.name': 'Jane', 'data.qty': 3 })).json().dataId;
    expect((await remove(bob.token, id)).statusCode).toBe(403); // as the REST delete (not the owner)
    const response = await remove(alice.token, id);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ _id: id, isActive: false, data: { name: 'Jane', qty: 3 } });
    expect((await remove(alice.token, id)).statusCode).toBe(404);
    expect((await stored()).map((row) => row.isActive)).toEqual([false]);
  });

  it('refuses every other form body with 415 and stores nothing', async () => {
    const [alice] = s.users;
    const id = (await insert(alice.token, { 'data.name': 'Jane', 'data.qty': 3 })).json().dataId;
    const refusals = [
      await send('POST', alice.token, form({ name: 'Jane', qty: '3' })),
      await send('POST', alice.token, form({ values: '{"data.name":"x"}', extra: '1' })),
      await send('POST', alice.token, 'values=1&values=2'),
      await send('POST', alice.token, form({ values: 'not json' })),
      await send('POST', alice.token, form({ values: '[1,2]' })),
      await send('POST', alice.token, form({ values: '{"__proto__":{"x":1}}' })),
      await send('PUT', alice.token, form({ values: '{"data.qty":1}' })),
      await send('PUT', alice.token, form({ key: id })),
      await send('DELETE', alice.token, form({ key: id, values: '{}' })),
      await send('DELETE', alice.token, form({ key: '' })),
      await send('PUT', alice.token, form({ name: 'x' }), `/api/data/${s.configId}/${id}`),
      await send('POST', s.admin, form({ title: 'x', type: 'form' }), '/api/configs'),
      await send('POST', alice.token, form({ email: 'a@example.com' }), '/auth/login'),
    ];
    for (const response of refusals) {
      expect(response.statusCode).toBe(415);
      expect(response.json()).toMatchObject({
        success: false,
        code: 'UNSUPPORTED_MEDIA_TYPE',
        statusCode: 415,
        details: { reason: expect.any(String), accepted: expect.stringContaining('values=<JSON object>') },
      });
    }
    // The update and remove routes take only the store's form: a JSON body has no record id.
    const json = await requestAs(s.t, alice.token, 'PUT', `/api/data/${s.configId}`, {
      key: id,
      values: { qty: 1 },
    });
    expect(json.statusCode).toBe(415);
    expect((await requestAs(s.t, alice.token, 'DELETE', `/api/data/${s.configId}`)).statusCode).toBe(415);
    // A values JSON nested too deep or holding a lone surrogate gets the JSON body checks.
    const deep = '{"a":'.repeat(100) + '1' + '}'.repeat(100);
    expect((await send('POST', alice.token, form({ values: deep }))).json().code).toBe('BODY_TOO_DEEP');
    expect((await send('POST', alice.token, form({ values: '{"data.name":"\\ud800"}' }))).statusCode).toBe(
      422,
    );
    expect(await stored()).toEqual([{ data: { name: 'Jane', qty: 3 }, isActive: true }]);
  });

  it('PATCH /api/data/:configId/:dataId merges JSON fields: owner with allowEdit or admin, re-validated', async () => {
    const [alice, bob, manager] = s.users;
    const created = await requestAs(s.t, alice.token, 'POST', `/api/data/${s.configId}`, {
      name: 'Jane',
      qty: 3,
      price: 50,
      address: { city: 'Pécs', zip: '7621' },
    });
    const id = created.json().dataId;
    const patch = (token: string, payload: object) =>
      requestAs(s.t, token, 'PATCH', `/api/data/${s.configId}/${id}`, payload);
    const response = await patch(alice.token, { qty: 2, address: { city: 'Győr' }, note: 'new' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({
      success: true,
      dataId: id,
      computedResults: { total: 100, bigOrder: false },
    });
    expect(response.json().data.data).toEqual({
      name: 'Jane',
      qty: 2,
      price: 50,
      address: { city: 'Győr', zip: '7621' },
      note: 'new',
    });
    expect(Object.keys(response.json().data.data)).toEqual(['name', 'qty', 'price', 'address', 'note']);
    expect((await patch(alice.token, { qty: 0 })).json().code).toBe('DATA_VALIDATION_FAILED');
    expect((await patch(bob.token, { qty: 1 })).statusCode).toBe(404);
    expect((await patch(manager.token, { qty: 1 })).statusCode).toBe(403);
    expect((await patch(s.admin, { qty: 5 })).statusCode).toBe(200);
    const notObject = await requestAs(s.t, alice.token, 'PATCH', `/api/data/${s.configId}/${id}`, [1]);
    expect(notObject.statusCode).toBe(422);
    expect((await stored())[0].data).toEqual({
      name: 'Jane',
      qty: 5,
      price: 50,
      address: { city: 'Győr', zip: '7621' },
      note: 'new',
    });
  });
});
