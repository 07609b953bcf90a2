import { postRecord } from '../utils/api-requests';
import { useAppSuite } from '../utils/app-suite';
import { postWorkflow } from '../utils/workflow-api';

/**
 * Versions and conditional requests (RFC 9110): every record, configuration and workflow carries a
 * `version` and answers its ETag `"<version>"`; If-Match makes a write conditional (412 when
 * stale, nothing written), If-None-Match a read (304); a PATCH merges into the version current when
 * it is written, so concurrent edits of different fields are all kept.
 */
describe('versions and conditional requests', () => {
  // Alice (the user) writes the records, the admin the configurations and workflows.
  const s = useAppSuite({ users: [{ email: 'alice@example.com' }], forms: 1 });

  const data = (dataId = '') => `/api/data/${s.configId}${dataId ? `/${dataId}` : ''}`;
  const submit = async (values: object = { name: 'Ann', qty: 2 }) => {
    const response = await postRecord(s.t, s.user.token, s.configId, values);
    expect(response.statusCode).toBe(201);
    return response;
  };
  const write = (
    method: 'PUT' | 'PATCH' | 'DELETE' | 'POST',
    url: string,
    payload?: object,
    ifMatch?: string,
    token = s.user.token,
  ) =>
    s.t.request({
      method,
      url,
      token,
      ...(payload ? { payload } : {}),
      headers: ifMatch === undefined ? {} : { 'if-match': ifMatch },
    });
  const adminWrite = (method: 'PUT' | 'DELETE', url: string, payload?: object, ifMatch?: string) =>
    write(method, url, payload, ifMatch, s.admin);
  const read = (url: string, token = s.user.token, ifNoneMatch?: string) =>
    s.t.request({
      method: 'GET',
      url,
      token,
      headers: ifNoneMatch === undefined ? {} : { 'if-none-match': ifNoneMatch },
    });
  const history = async (dataId: string) =>
    (await read(`${data(dataId)}/history`, s.admin)).json().data as {
      action: string;
      changes: Record<string, unknown>;
    }[];

  describe('records', () => {
    it('create and read answer the ETag of version 1; If-None-Match of it is a 304 without a body', async () => {
      const created = await submit();
      expect(created.headers.etag).toBe('"1"');
      expect(created.json().data.version).toBe(1);
      const dataId = created.json().dataId;

      const first = await read(data(dataId));
      expect(first.statusCode).toBe(200);
      expect(first.headers.etag).toBe('"1"');
      expect(first.json().version).toBe(1);

      for (const tag of ['"1"', 'W/"1"', '"7", "1"', '*']) {
        const cached = await read(data(dataId), s.user.token, tag);
        expect(cached.statusCode).toBe(304);
        expect(cached.body).toBe('');
        expect(cached.headers.etag).toBe('"1"');
      }
      const changed = await read(data(dataId), s.user.token, '"2"');
      expect(changed.statusCode).toBe(200);
      expect(changed.json()._id).toBe(dataId);
    });

    it('every change raises the version: PATCH, PUT, DELETE and restore answer the new ETag', async () => {
      const dataId = (await submit()).json().dataId;
      const patched = await write('PATCH', data(dataId), { qty: 3 }, '"1"');
      expect(patched.statusCode).toBe(200);
      expect(patched.headers.etag).toBe('"2"');
      expect(patched.json().data).toMatchObject({ version: 2, data: { name: 'Ann', qty: 3 } });
      const replaced = await write('PUT', data(dataId), { name: 'Bea', qty: 1 });
      expect(replaced.headers.etag).toBe('"3"');
      const deleted = await write('DELETE', data(dataId), undefined, '"3"');
      expect(deleted.statusCode).toBe(200);
      expect(deleted.headers.etag).toBe('"4"');
      expect(deleted.json()).toMatchObject({ isActive: false, version: 4 });
      const restored = await write('POST', `${data(dataId)}/restore`, undefined, '"4"');
      expect(restored.statusCode).toBe(200);
      expect(restored.headers.etag).toBe('"5"');
      expect(restored.json()).toMatchObject({ isActive: true, version: 5 });
      expect((await history(dataId)).map((entry) => entry.action)).toEqual([
        'restored',
        'deleted',
        'updated',
        'updated',
        'created',
      ]);
    });

    it('a stale If-Match is a 412 with the current version and the fields changed since; nothing is written', async () => {
      const dataId = (await submit({ name: 'Ann', qty: 2, city: 'Paris' })).json().dataId;
      await write('PATCH', data(dataId), { qty: 3 }, '"1"');
      await write('PATCH', data(dataId), { city: 'Rome' }, '"2"');

      const stale = await write('PATCH', data(dataId), { name: 'Bob' }, '"1"');
      expect(stale.statusCode).toBe(412);
      expect(stale.json()).toEqual({
        success: false,
        code: 'PRECONDITION_FAILED',
        statusCode: 412,
        error: expect.stringContaining('version 3'),
        details: { currentVersion: 3, etag: '"3"', changedFields: ['city', 'qty'] },
      });
      const sinceTwo = await write('PUT', data(dataId), { name: 'Bob', qty: 1 }, '"2"');
      expect(sinceTwo.statusCode).toBe(412);
      expect(sinceTwo.json().details).toEqual({ currentVersion: 3, etag: '"3"', changedFields: ['city'] });
      // A tag that is no version of ours matches nothing (a 412, not a 400), as does a weak one.
      for (const tag of ['"abc"', 'W/"3"'])
        expect((await write('DELETE', data(dataId), undefined, tag)).statusCode).toBe(412);
      expect((await write('POST', `${data(dataId)}/restore`, undefined, '"3"')).statusCode).toBe(404);

      const stored = await read(data(dataId));
      expect(stored.json()).toMatchObject({
        version: 3,
        isActive: true,
        data: { name: 'Ann', qty: 3, city: 'Rome' },
      });
      expect(await history(dataId)).toHaveLength(3);
      // `*` matches whatever version is current.
      expect((await write('PATCH', data(dataId), { qty: 4 }, '*')).headers.etag).toBe('"4"');
    });

    it('two PUTs with the same If-Match at once: exactly one 200 and one 412', async () => {
      const ids: string[] = [];
      for (let i = 0; i < 10; i++) ids.push((await submit()).json().dataId);
      const answers = await Promise.all(
        ids.flatMap((dataId) => [
          write('PUT', data(dataId), { name: 'First', qty: 1 }, '"1"'),
          write('PUT', data(dataId), { name: 'Second', qty: 2 }, '"1"'),
        ]),
      );
      for (let i = 0; i < ids.length; i++) {
        const statuses = [answers[2 * i].statusCode, answers[2 * i + 1].statusCode].sort();
        expect(statuses).toEqual([200, 412]);
        const winner = answers[2 * i].statusCode === 200 ? answers[2 * i] : answers[2 * i + 1];
        const stored = await read(data(ids[i]));
        expect(stored.json()).toMatchObject({ version: 2, data: winner.json().data.data });
        expect(await history(ids[i])).toHaveLength(2);
      }
    });

    it('50 pairs of concurrent PATCHes of different fields, without If-Match: every change survives', async () => {
      const ids: string[] = [];
      for (let i = 0; i < 50; i++) ids.push((await submit({ name: `N${i}`, qty: 1 })).json().dataId);
      const answers = await Promise.all(
        ids.flatMap((dataId, i) => [
          write('PATCH', data(dataId), { price: i }),
          write('PATCH', data(dataId), { city: `C${i}` }),
        ]),
      );
      expect(answers.map((answer) => answer.statusCode)).toEqual(answers.map(() => 200));
      for (let i = 0; i < ids.length; i++) {
        const stored = await read(data(ids[i]));
        expect(stored.json()).toMatchObject({
          version: 3,
          data: { name: `N${i}`, qty: 1, price: i, city: `C${i}` },
          computedResults: { total: i },
        });
        const entries = await history(ids[i]);
        expect(entries.map((entry) => entry.action)).toEqual(['updated', 'updated', 'created']);
        expect(
          entries
            .slice(0, 2)
            .flatMap((entry) => Object.keys(entry.changes))
            .sort(),
        ).toEqual(['city', 'price']);
      }
    });

    it('the grid store edit and remove honour If-Match (sent from onBeforeSend) and answer the ETag', async () => {
      const dataId = (await submit()).json().dataId;
      const FORM = 'application/x-www-form-urlencoded; charset=UTF-8';
      const store = (method: 'PUT' | 'DELETE', fields: Record<string, string>, ifMatch: string) =>
        s.t.request({
          method,
          url: data(),
          token: s.user.token,
          headers: { 'content-type': FORM, 'if-match': ifMatch },
          payload: new URLSearchParams(fields).toString(),
        });
      const values = JSON.stringify({ 'data.city': 'Oslo' });
      const edited = await store('PUT', { key: dataId, values }, '"1"');
      expect(edited.statusCode).toBe(200);
      expect(edited.headers.etag).toBe('"2"');
      expect(edited.json().data).toMatchObject({ version: 2, data: { name: 'Ann', qty: 2, city: 'Oslo' } });

      const staleEdit = await store('PUT', { key: dataId, values: JSON.stringify({ 'data.qty': 9 }) }, '"1"');
      expect(staleEdit.statusCode).toBe(412);
      expect(staleEdit.json().details).toEqual({ currentVersion: 2, etag: '"2"', changedFields: ['city'] });
      const staleRemove = await store('DELETE', { key: dataId }, '"1"');
      expect(staleRemove.statusCode).toBe(412);
      const stored = await read(data(dataId));
      expect(stored.json()).toMatchObject({ version: 2, isActive: true, data: { qty: 2 } });

      const removed = await store('DELETE', { key: dataId }, '"2"');
      expect(removed.statusCode).toBe(200);
      expect(removed.headers.etag).toBe('"3"');
    });
  });

  describe('configurations', () => {
    const url = () => `/api/configs/${s.configId}`;
    const put = (payload: object, ifMatch?: string) => adminWrite('PUT', url(), payload, ifMatch);

    it('answer their version as ETag; a stale If-Match is a 412 and changes nothing', async () => {
      const first = await read(url(), s.admin);
      expect(first.headers.etag).toBe('"1"');
      expect(first.json().version).toBe(1);
      expect((await read(url(), s.admin, '"1"')).statusCode).toBe(304);

      const updated = await put({ title: 'Orders v2' }, '"1"');
      expect(updated.statusCode).toBe(200);
      expect(updated.headers.etag).toBe('"2"');
      expect(updated.json()).toMatchObject({ title: 'Orders v2', version: 2 });

      const stale = await put({ title: 'Lost' }, '"1"');
      expect(stale.statusCode).toBe(412);
      expect(stale.json()).toMatchObject({
        code: 'PRECONDITION_FAILED',
        details: { currentVersion: 2, etag: '"2"' },
      });
      expect((await adminWrite('DELETE', url(), undefined, '"1"')).statusCode).toBe(412);
      const now = await read(url(), s.admin);
      expect(now.json()).toMatchObject({ title: 'Orders v2', version: 2, isActive: true });

      const deleted = await adminWrite('DELETE', url(), undefined, '"2"');
      expect(deleted.statusCode).toBe(200);
      expect(deleted.json()).toMatchObject({ isActive: false, version: 3 });
    });

    it('two concurrent updates of different fields without If-Match both survive', async () => {
      const answers = await Promise.all([
        put({ title: 'New title' }),
        put({ description: 'New description' }),
        put({ preferences: { allowDelete: false } }),
      ]);
      expect(answers.map((answer) => answer.statusCode)).toEqual([200, 200, 200]);
      const now = await read(url(), s.admin);
      expect(now.json()).toMatchObject({
        title: 'New title',
        description: 'New description',
        preferences: { allowDelete: false, allowEdit: true },
        version: 4,
      });
    });
  });

  describe('workflows', () => {
    it('answer their (definition) version as ETag; a stale If-Match is a 412 and changes nothing', async () => {
      const created = await postWorkflow(s.t, s.admin, {
        name: 'Check',
        type: 'save',
        config: { steps: [{ name: 'v', type: 'validate', config: {} }] },
      });
      expect(created.statusCode).toBe(201);
      expect(created.headers.etag).toBe('"1"');
      const url = `/api/workflow/${created.json().id}`;
      expect((await read(url, s.admin, '"1"')).statusCode).toBe(304);

      const updated = await adminWrite('PUT', url, { name: 'Check v2' }, '"1"');
      expect(updated.statusCode).toBe(200);
      expect(updated.headers.etag).toBe('"2"');
      const stale = await adminWrite('PUT', url, { name: 'Lost' }, '"1"');
      expect(stale.statusCode).toBe(412);
      expect(stale.json().details).toEqual({ currentVersion: 2, etag: '"2"' });
      expect((await adminWrite('DELETE', url, undefined, '"1"')).statusCode).toBe(412);
      expect((await read(url, s.admin)).json()).toMatchObject({ name: 'Check v2', version: 2 });
      const deleted = await adminWrite('DELETE', url, undefined, '"2"');
      expect(deleted.statusCode).toBe(200);
      expect(deleted.headers.etag).toBe('"3"');
    });
  });
});

describe('REQUIRE_IF_MATCH=true', () => {
  const s = useAppSuite({ env: { REQUIRE_IF_MATCH: 'true' }, forms: 1 });

  it('a write to one resource without If-Match is a 428 and changes nothing; creates and reads need none', async () => {
    const created = await postRecord(s.t, s.admin, s.configId, { name: 'Ann', qty: 2 });
    expect(created.statusCode).toBe(201);
    const url = `/api/data/${s.configId}/${created.json().dataId}`;
    for (const [method, target, payload] of [
      ['PATCH', url, { qty: 3 }],
      ['PUT', url, { name: 'Bob', qty: 1 }],
      ['DELETE', url, undefined],
      ['PUT', `/api/configs/${s.configId}`, { title: 'x' }],
      ['DELETE', `/api/configs/${s.configId}`, undefined],
    ] as const) {
      const response = await s.t.request({
        method,
        url: target,
        token: s.admin,
        ...(payload ? { payload } : {}),
      });
      expect(response.statusCode).toBe(428);
      expect(response.json()).toMatchObject({ code: 'PRECONDITION_REQUIRED', statusCode: 428 });
    }
    const read = await s.t.request({ method: 'GET', url, token: s.admin });
    expect(read.json()).toMatchObject({ version: 1, data: { name: 'Ann', qty: 2 } });
    const patched = await s.t.request({
      method: 'PATCH',
      url,
      token: s.admin,
      payload: { qty: 3 },
      headers: { 'if-match': read.headers.etag as string },
    });
    expect(patched.statusCode).toBe(200);
    expect(patched.headers.etag).toBe('"2"');
  });
});
