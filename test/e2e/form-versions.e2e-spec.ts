import { sql } from 'drizzle-orm';
import { rowsOf } from '../../src/database/raw-rows';
import { createSite } from '../factories/site.factory';
import { createUser } from '../factories/user.factory';
import { postRecord } from '../utils/api-requests';
import { useAppSuite } from '../utils/app-suite';
import { replaceFormPermissions } from '../utils/workflow-api';
import { dataSheet } from '../utils/xlsx';

/**
 * Form versions: every change of a configuration keeps the version it makes, immutable; each record
 * carries the configVersion it was last validated against; lists, both grid forms, export and
 * statistics filter by it; the per-form OpenAPI document types any kept version; a version can be
 * made current again (restore, with If-Match).
 */
describe('form versions', () => {
  /** Version 1: name and qty; version 2 adds a required `email`; version 3 renames the title. */
  const V1_SCHEMA = {
    type: 'object',
    required: ['name'],
    properties: { name: { type: 'string' }, qty: { type: 'integer' } },
  };
  const V2_SCHEMA = {
    type: 'object',
    required: ['name', 'email'],
    properties: { name: { type: 'string' }, email: { type: 'string' }, qty: { type: 'integer' } },
  };

  // Alice (the user) submits the records.
  const s = useAppSuite({
    users: [{ email: 'alice@example.com' }],
    forms: [{ title: 'Sign-up', schema: V1_SCHEMA, validationRules: [], computedRules: [] }],
  });

  const config = (path = '') => `/api/configs/${s.configId}${path}`;
  const data = (path = '') => `/api/data/${s.configId}${path}`;
  const get = (url: string, token = s.admin, headers: Record<string, string> = {}) =>
    s.t.request({ method: 'GET', url, token, headers });
  const updateConfig = async (payload: object, headers: Record<string, string> = {}) => {
    const response = await s.t.request({ method: 'PUT', url: config(), token: s.admin, payload, headers });
    expect(response.statusCode).toBe(200);
    return response.json();
  };
  const submit = async (values: object) => {
    const response = await postRecord(s.t, s.user.token, s.configId, values);
    expect(response.statusCode).toBe(201);
    return response.json();
  };
  const patch = (dataId: string, values: object) =>
    s.t.request({ method: 'PATCH', url: data(`/${dataId}`), token: s.user.token, payload: values });
  /** POST .../versions/:version/restore with If-Match: `ifMatch`, as the admin unless `as` says who, where. */
  const restore = (
    version: number,
    ifMatch?: string,
    as?: { token: string; headers: Record<string, string> },
  ) =>
    s.t.request({
      method: 'POST',
      url: config(`/versions/${version}/restore`),
      token: as?.token ?? s.admin,
      headers: { ...as?.headers, ...(ifMatch && { 'if-match': ifMatch }) },
    });
  /** Versions 2 (schema) and 3 (title): the configuration edited twice. */
  const editTwice = async () => {
    await updateConfig({ schema: V2_SCHEMA });
    await updateConfig({ title: 'Sign-up 2027' });
  };

  it('a configuration edited twice lists three versions: number, author, time, the parts changed', async () => {
    await editTwice();
    const listed = await get(config('/versions'));
    expect(listed.statusCode).toBe(200);
    const body = listed.json();
    expect(body).toMatchObject({ total: 3, page: 1, pages: 1 });
    const adminId = (await get('/auth/me')).json().id;
    expect(body.data.map((v: { version: number }) => v.version)).toEqual([3, 2, 1]);
    expect(body.data).toEqual([
      expect.objectContaining({ version: 3, action: 'updated', changedParts: ['title'], authorId: adminId }),
      expect.objectContaining({ version: 2, action: 'updated', changedParts: ['schema'], authorId: adminId }),
      expect.objectContaining({ version: 1, action: 'created', changedParts: [], restoredFrom: null }),
    ]);
    expect(Date.parse(body.data[0].createdAt)).toBeGreaterThanOrEqual(Date.parse(body.data[2].createdAt));
    // The listing carries no content; one version does, as it was.
    expect(body.data[0].schema).toBeUndefined();
    const first = await get(config('/versions/1'));
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({
      version: 1,
      configId: s.configId,
      title: 'Sign-up',
      schema: V1_SCHEMA,
    });
    expect((await get(config('/versions/2'))).json()).toMatchObject({ title: 'Sign-up', schema: V2_SCHEMA });
    expect((await get(config('/versions/3'))).json()).toMatchObject({ title: 'Sign-up 2027' });
    // Paging.
    const second = (await get(config('/versions?limit=2&page=2'))).json();
    expect(second).toMatchObject({ total: 3, page: 2, pages: 2 });
    expect(second.data.map((v: { version: number }) => v.version)).toEqual([1]);
    // A page past any list's offset is refused, not a failed query.
    const tooFar = await get(config('/versions?page=1e300'));
    expect([tooFar.statusCode, tooFar.json().validationErrors]).toEqual([
      422,
      [{ field: 'page', rule: 'max', message: 'page must not be greater than 10000000' }],
    ]);
    for (const missing of ['4', '0', '-1', 'abc', '99999999999']) {
      const response = await get(config(`/versions/${missing}`));
      expect([missing, response.statusCode, response.json().code]).toEqual([
        missing,
        404,
        'CONFIG_VERSION_NOT_FOUND',
      ]);
    }
  });

  it('a record keeps the version it was validated against until an edit moves it to the current one', async () => {
    const underV1 = await submit({ name: 'Ann', qty: 1 });
    expect(underV1.data.configVersion).toBe(1);
    await editTwice();
    expect((await get(data(`/${underV1.dataId}`), s.user.token)).json()).toMatchObject({ configVersion: 1 });
    // Version 2 requires an e-mail: a create validates against the current version (3).
    const refused = await postRecord(s.t, s.user.token, s.configId, { name: 'Bo' });
    expect(refused.statusCode).toBe(400);
    const underV3 = await submit({ name: 'Bo', email: 'bo@example.com' });
    expect(underV3.data.configVersion).toBe(3);

    // An edit validates against the current version and moves the record to it.
    const stillOld = await patch(underV1.dataId, { qty: 2 });
    expect(stillOld.statusCode).toBe(400);
    expect((await get(data(`/${underV1.dataId}`), s.user.token)).json().configVersion).toBe(1);
    const moved = await patch(underV1.dataId, { email: 'ann@example.com' });
    expect(moved.statusCode).toBe(200);
    expect(moved.json().data).toMatchObject({ configVersion: 3, version: 2 });

    // The history says which version each change ran against.
    const entries = (await get(data(`/${underV1.dataId}/history`))).json().data;
    expect(
      entries.map((e: { action: string; configVersion: number }) => [e.action, e.configVersion]),
    ).toEqual([
      ['updated', 3],
      ['created', 1],
    ]);
    // The record events' payload (webhooks, workflow triggers' savedData) carries it too.
    const [payload] = rowsOf(
      await s.t.database.client.db.execute(
        sql`select fdws_record_json(r) as record from data_records r where r.id = ${underV1.dataId}::uuid`,
      ),
    );
    const record = typeof payload.record === 'string' ? JSON.parse(payload.record) : payload.record;
    expect(record).toMatchObject({ _id: underV1.dataId, version: 2, configVersion: 3 });
  });

  it('the list, both grid forms, export and statistics filter by configVersion; CSV shows both versions', async () => {
    const ann = await submit({ name: 'Ann', qty: 1 });
    await editTwice();
    const bo = await submit({ name: 'Bo', email: 'bo@example.com' });
    const ids = (response: { json(): { data: { _id: string }[] } }) =>
      response.json().data.map((record) => record._id);

    expect(ids(await get(data('?configVersion=1')))).toEqual([ann.dataId]);
    expect(ids(await get(data('?configVersion=3')))).toEqual([bo.dataId]);
    expect(ids(await get(data('?configVersion=2')))).toEqual([]);
    expect((await get(data())).json().total).toBe(2);
    // The grid-library form: the parameter, and configVersion as a selector of filter, sort and group.
    const grid = await get(data('?requireTotalCount=true&configVersion=1&skip=0&take=10'));
    expect(grid.json()).toMatchObject({ totalCount: 1, data: [{ _id: ann.dataId, configVersion: 1 }] });
    const filtered = await get(
      data(`?filter=${encodeURIComponent('["configVersion","=",3]')}&requireTotalCount=true`),
    );
    expect(filtered.json()).toMatchObject({ totalCount: 1, data: [{ _id: bo.dataId }] });
    const grouped = await get(data(`?group=${encodeURIComponent('[{"selector":"configVersion"}]')}`));
    expect(grouped.json().data.map((g: { key: unknown; count: number }) => [g.key, g.count])).toEqual([
      [1, 1],
      [3, 1],
    ]);

    // The spec's header stays `id,createdAt,<fields>`; the version column is asked for.
    const plain = await get(data('/export?format=csv'));
    expect(plain.body.split('\n')[0]).toBe('id,createdAt,name,qty');
    const csv = await get(data('/export?format=csv&configVersionColumn=true'));
    expect(csv.statusCode).toBe(200);
    const lines = csv.body.split('\n');
    expect(lines[0]).toBe('id,createdAt,configVersion,name,qty');
    expect(lines.slice(1).map((line) => line.split(',')[2])).toEqual(['1', '3']);
    expect(lines[1]).toMatch(new RegExp(`^${ann.dataId},[^,]+,1,Ann,1$`));
    const onlyV3 = await get(
      data('/export?format=csv&configVersion=3&configVersionColumn=true&columns=name,email'),
    );
    expect(onlyV3.body.split('\n')).toEqual([
      'id,createdAt,configVersion,name,email',
      expect.stringMatching(new RegExp(`^${bo.dataId},[^,]+,3,Bo,bo@example.com$`)),
    ]);
    const json = await get(data('/export?format=json&configVersion=1'));
    expect(json.json()).toEqual([expect.objectContaining({ _id: ann.dataId, configVersion: 1 })]);
    const excel = await get(data('/export?format=excel&configVersion=3&configVersionColumn=true'));
    expect(excel.statusCode).toBe(200);
    const sheet = await dataSheet(excel);
    expect((sheet.getRow(1).values as unknown[]).slice(0, 4)).toEqual([
      undefined,
      'ID',
      'Created at',
      'Form version',
    ]);
    expect(sheet.getRow(2).getCell(3).value).toBe(3);

    expect((await get(data('/stats'))).json().total).toBe(2);
    expect((await get(data('/stats?configVersion=1'))).json().total).toBe(1);
    expect((await get(data('/stats?configVersion=2'))).json().total).toBe(0);
    for (const url of [
      data('?configVersion=x'),
      data('/export?configVersion=0'),
      data('/export?format=csv&configVersionColumn=yes'),
      data('/stats?configVersion=-1'),
    ]) {
      const bad = await get(url);
      expect([url, bad.statusCode, bad.json().code]).toEqual([url, 422, 'VALIDATION_FAILED']);
    }
  });

  it('the per-form OpenAPI document of version 1 types the old fields', async () => {
    await editTwice();
    const current = (await get(config('/openapi.json'))).json();
    expect(current.components.schemas.FormData.properties).toHaveProperty('email');
    expect(current.info['x-config-version']).toBe(3);
    const old = await get(config('/openapi.json?version=1'));
    expect(old.statusCode).toBe(200);
    const document = old.json();
    expect(document.components.schemas.FormData).toEqual(V1_SCHEMA);
    expect(document.info['x-config-version']).toBe(1);
    expect(document.info.title).toBe('Sign-up: records');
    const missing = await get(config('/openapi.json?version=9'));
    expect([missing.statusCode, missing.json().code]).toEqual([404, 'CONFIG_VERSION_NOT_FOUND']);
    expect((await get(config('/openapi.json?version=zero'))).statusCode).toBe(422);
  });

  it('restore makes an old version current as a new version; If-Match is honoured as for PUT', async () => {
    await editTwice();
    const stale = await restore(1, '"2"');
    expect(stale.statusCode).toBe(412);
    expect(stale.json()).toMatchObject({ code: 'PRECONDITION_FAILED', details: { currentVersion: 3 } });
    expect((await get(config())).json()).toMatchObject({ version: 3, title: 'Sign-up 2027' });
    expect((await get(config('/versions'))).json().total).toBe(3);

    const restored = await restore(1, '"3"');
    expect(restored.statusCode).toBe(200);
    expect(restored.headers.etag).toBe('"4"');
    expect(restored.json()).toMatchObject({ version: 4, title: 'Sign-up', schema: V1_SCHEMA });
    const latest = (await get(config('/versions'))).json().data[0];
    expect(latest).toMatchObject({ version: 4, action: 'restored', restoredFrom: 1 });
    expect([...latest.changedParts].sort()).toEqual(['schema', 'title']);
    // Records submitted now are validated against the restored version 4: no e-mail needed.
    expect((await submit({ name: 'Cy' })).data.configVersion).toBe(4);
    // Version 1 itself is unchanged.
    expect((await get(config('/versions/1'))).json()).toMatchObject({ version: 1, action: 'created' });

    // Two restores with the same If-Match: one wins, the other is a 412.
    const both = await Promise.all([2, 3].map((n) => restore(n, '"4"')));
    expect(both.map((r) => r.statusCode).sort()).toEqual([200, 412]);
    expect((await get(config('/versions'))).json().total).toBe(5);
  });

  it("another site's user gets 404 on every version route; a user without rights 403", async () => {
    const siteB = await createSite(s.t, s.admin, 'Beta', 'beta.example.com');
    const siteA = await createSite(s.t, s.admin, 'Alpha', 'alpha.example.com');
    await updateConfig({ siteId: siteA });
    const managerB = await createUser(s.t, { role: 'manager', siteId: siteB });
    const onB = { host: 'beta.example.com' };
    for (const url of [config('/versions'), config('/versions/1'), config('/openapi.json?version=1')]) {
      const response = await get(url, managerB.token, onB);
      expect([url, response.statusCode, response.json().code]).toEqual([url, 404, 'CONFIG_NOT_FOUND']);
    }
    // A site B designer who may update configurations: the restore is a 404 as the PUT is.
    const role = await s.t.request({
      method: 'POST',
      url: '/api/roles',
      token: s.admin,
      payload: { name: 'designer', permissions: { configs: ['read', 'update'] } },
    });
    expect(role.statusCode).toBe(201);
    const designerB = await createUser(s.t, { role: 'designer', siteId: siteB });
    const restoreOnB = await restore(1, undefined, { token: designerB.token, headers: onB });
    const putOnB = await s.t.request({
      method: 'PUT',
      url: config(),
      token: designerB.token,
      headers: onB,
      payload: { title: 'Taken over' },
    });
    expect([restoreOnB.statusCode, restoreOnB.json().code]).toEqual([404, 'CONFIG_NOT_FOUND']);
    expect(putOnB.statusCode).toBe(404);

    // Same site, no right to update configurations: 403, and nothing is written.
    const userA = await createUser(s.t, { siteId: siteA });
    const onA = { host: 'alpha.example.com' };
    expect((await get(config('/versions'), userA.token, onA)).statusCode).toBe(200);
    const refused = await restore(1, undefined, { token: userA.token, headers: onA });
    expect([refused.statusCode, refused.json().code]).toEqual([403, 'FORBIDDEN']);
    // Without viewForm the versions are as closed as the configuration (the replace must answer 200).
    await replaceFormPermissions(s.t, s.admin, s.configId, { roles: { user: [] } });
    expect((await get(config('/versions'), userA.token, onA)).statusCode).toBe(403);
    expect((await get(config('/versions'))).json().total).toBe(2);
  });
});
