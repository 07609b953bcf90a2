import { gzipSync } from 'node:zlib';
import { sql } from 'drizzle-orm';
import { adminToken } from '../factories/user.factory';
import { createConfig, ORDER_FORM } from '../factories/config.factory';
import { postConfig, postRecord } from '../utils/api-requests';
import { useAppSuite } from '../utils/app-suite';
import { countRows } from '../utils/row-counts';
import { createTestApp } from '../utils/test-app';

/** `{"a":{"a":…1…}}` nested `depth` levels, as JSON text (JSON.stringify itself would overflow). */
function nested(depth: number): string {
  return '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

/** The whole error body of a refusal. */
function refusal(
  statusCode: number,
  code: string,
  error: string,
  validationErrors?: { field: string; rule: string; message: string }[],
) {
  return { success: false, error, code, statusCode, ...(validationErrors && { validationErrors }) };
}

/** The error body of a 422 for one field. */
function fieldRefusal(field: string, rule: string, message: string) {
  return refusal(422, 'VALIDATION_FAILED', 'The request is not valid.', [{ field, rule, message }]);
}

const TOO_DEEP = refusal(400, 'BODY_TOO_DEEP', 'The request body is nested too deeply (at most 64 levels).');

describe('hostile bodies: nesting depth and malformed Unicode', () => {
  // Alice (the user) submits the records.
  const s = useAppSuite({ users: [{ email: 'alice@example.com' }], forms: 1, seed: 'once' });

  const count = async (query: ReturnType<typeof sql>) =>
    ((await s.t.database.client.db.execute(query)) as any).rows[0].n as number;
  const rowCount = async (table: 'users' | 'form_configs' | 'data_records') =>
    (await countRows(s.t, { n: table })).n;
  /** POST of `body` as it is, sent as JSON unless `contentType` says otherwise. */
  const send = (url: string, body: string, token?: string, contentType = 'application/json') =>
    s.t.request({ method: 'POST', url, token, headers: { 'content-type': contentType }, payload: body });
  const FORM = 'application/x-www-form-urlencoded';

  it('a 5,000-deep body is refused with 400 BODY_TOO_DEEP before any processing, nothing stored', async () => {
    const users = await rowCount('users');
    const configs = await rowCount('form_configs');
    const deep = nested(5000);
    const cases: [string, string, string?][] = [
      ['/auth/login', `{"email":"a@example.com","password":"password-123","x":${deep}}`],
      ['/auth/register', `{"email":"deep@example.com","password":"password-123","name":"D","x":${deep}}`],
      ['/api/auth/register', deep],
      [`/api/data/${s.configId}`, `{"name":"W","qty":1,"x":${deep}}`, s.user.token],
      ['/api/configs', `{"title":"Deep","type":"form","schema":${deep}}`, s.admin],
    ];
    for (const [url, body, token] of cases) {
      const response = await send(url, body, token);
      expect({ url, status: response.statusCode }).toEqual({ url, status: 400 });
      expect(response.json()).toEqual(TOO_DEEP);
    }
    expect(await rowCount('users')).toBe(users);
    expect(await rowCount('form_configs')).toBe(configs);
    expect(await rowCount('data_records')).toBe(0);
  });

  it('the message is localized and the limit is BODY_MAX_DEPTH: 64 levels pass the check, 65 do not', async () => {
    const hu = await send('/auth/login?lang=hu', nested(100));
    expect(hu.statusCode).toBe(400);
    expect(hu.json().error).toBe('A kérés törzse túl mélyen egymásba ágyazott (legfeljebb 64 szint).');
    // 64 levels reach validation (422: unknown property), 65 are refused before it.
    expect((await send('/auth/login', nested(64))).json().code).toBe('VALIDATION_FAILED');
    expect((await send('/auth/login', nested(65))).json().code).toBe('BODY_TOO_DEEP');
    // Arrays count as levels too.
    expect((await send('/auth/login', '['.repeat(65) + ']'.repeat(65))).json().code).toBe('BODY_TOO_DEEP');
    // A realistic configuration is far from the limit.
    expect((await postConfig(s.t, s.admin, ORDER_FORM)).statusCode).toBe(201);
  });

  it("JSON sent as text/plain (fetch's default for a string body) is a 415, on every kind of route; nothing stored", async () => {
    const records = await rowCount('data_records');
    const configs = await rowCount('form_configs');
    for (const [url, body, token] of [
      [`/api/data/${s.configId}`, '{"name":"W","qty":1}', s.user.token],
      ['/api/configs', '{"title":"t","type":"form"}', s.admin],
      ['/auth/login', '{"email":"a@example.com","password":"password-123"}', undefined],
    ] as const) {
      const response = await send(url, body, token, 'text/plain;charset=UTF-8');
      expect(response.statusCode).toBe(415);
      expect(response.json()).toEqual(
        refusal(415, 'UNSUPPORTED_MEDIA_TYPE', "The request body's content type is not supported."),
      );
    }
    expect(await rowCount('data_records')).toBe(records);
    expect(await rowCount('form_configs')).toBe(configs);
  });

  it('a lone UTF-16 surrogate is a 422 field error, not a 500', async () => {
    const users = await rowCount('users');
    const response = await send(
      '/auth/register',
      '{"email":"\\ud800x@example.com","password":"password-123","name":"S"}',
    );
    const malformed = 'contains malformed Unicode (a lone surrogate)';
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual(fieldRefusal('email', 'wellFormedUnicode', malformed));
    const nestedField = await send(
      `/api/data/${s.configId}`,
      '{"name":"W","qty":1,"address":{"lines":["ok","\\udc00"]}}',
      s.user.token,
    );
    expect(nestedField.statusCode).toBe(422);
    expect(nestedField.json()).toEqual(fieldRefusal('address.lines.1', 'wellFormedUnicode', malformed));
    const inKey = await send('/auth/login', '{"\\ud83d":"x","email":"a@example.com","password":"p"}');
    expect(inKey.statusCode).toBe(422);
    expect(await rowCount('users')).toBe(users);
    // A well-formed pair (an emoji) is fine.
    const emoji = await send(
      '/auth/register',
      '{"email":"emoji@example.com","password":"password-123","name":"\\ud83d\\ude00"}',
    );
    expect(emoji.statusCode).toBe(201);
  });

  it('a body whose bytes are not UTF-8 is a 400 INVALID_JSON, not stored with U+FFFD in their place', async () => {
    const records = await rowCount('data_records');
    const response = await s.t.request({
      method: 'POST',
      url: `/api/data/${s.configId}`,
      token: s.user.token,
      headers: { 'content-type': 'application/json' },
      payload: Buffer.concat([
        Buffer.from('{"name":"A'),
        Buffer.from([0xff, 0xfe]),
        Buffer.from('B","qty":1}'),
      ]),
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual(refusal(400, 'INVALID_JSON', 'The request body is not valid JSON.'));
    expect(await rowCount('data_records')).toBe(records);
    // A UTF-8 byte order mark and multi-byte characters are fine.
    const accented = await s.t.request({
      method: 'POST',
      url: `/api/data/${s.configId}`,
      token: s.user.token,
      headers: { 'content-type': 'application/json' },
      payload: Buffer.from('\ufeff{"name":"Árvíztűrő 😀","qty":1}', 'utf8'),
    });
    expect(accented.statusCode).toBe(201);
    expect(accented.json().data).toMatchObject({ data: { name: 'Árvíztűrő 😀', qty: 1 } });
  });

  it('a body with a Content-Encoding other than identity is a 415, unread; identity is fine', async () => {
    const records = await rowCount('data_records');
    const body = JSON.stringify({ name: 'Zip', qty: 1 });
    for (const [encoding, payload] of [
      ['gzip', gzipSync(body)],
      ['gzip', Buffer.from(body)],
      ['br, gzip', Buffer.from(body)],
    ] as const) {
      const response = await s.t.request({
        method: 'POST',
        url: `/api/data/${s.configId}`,
        token: s.user.token,
        headers: { 'content-type': 'application/json', 'content-encoding': encoding },
        payload,
      });
      expect(response.statusCode).toBe(415);
      expect(response.json()).toMatchObject({
        code: 'UNSUPPORTED_MEDIA_TYPE',
        details: { reason: 'a Content-Encoding other than identity', accepted: 'identity' },
      });
    }
    expect(await rowCount('data_records')).toBe(records);
    const identity = await s.t.request({
      method: 'POST',
      url: `/api/data/${s.configId}`,
      token: s.user.token,
      headers: { 'content-type': 'application/json', 'content-encoding': 'Identity' },
      payload: body,
    });
    expect(identity.statusCode).toBe(201);
  });

  it('a number a double cannot hold as written is a 422 field error (rule exactNumber), not stored changed', async () => {
    const records = await rowCount('data_records');
    const inexact = (field: string) =>
      fieldRefusal(
        field,
        'exactNumber',
        'is a number a double cannot hold as written (too many digits or too large); send it as a string',
      );
    const cases: [string, string][] = [
      ['{"name":"W","qty":1,"price":1e400}', 'price'],
      ['{"name":"W","qty":1,"big":123456789012345678901234567890}', 'big'],
      ['{"name":"W","qty":1,"a":{"b":[1,2,0.30000000000000001]}}', 'a.b.2'],
      ['{"name":"W","qty":1,"tiny":1e-400}', 'tiny'],
    ];
    for (const [payload, field] of cases) {
      const response = await send(`/api/data/${s.configId}`, payload, s.user.token);
      expect({ payload, status: response.statusCode }).toEqual({ payload, status: 422 });
      expect(response.json()).toEqual(inexact(field));
    }
    const form = await send(
      `/api/data/${s.configId}`,
      `values=${encodeURIComponent('{"data.name":"W","data.qty":1,"data.price":1e400}')}`,
      s.user.token,
      FORM,
    );
    expect(form.statusCode).toBe(422);
    expect(form.json()).toEqual(inexact('data.price'));
    expect(await rowCount('data_records')).toBe(records);
    // Exact numbers, and number-like strings, are stored as sent.
    const fine = await send(
      `/api/data/${s.configId}`,
      '{"name":"1e400","qty":1,"price":1.5e3,"id":9007199254740991,"ratio":0.1}',
      s.user.token,
    );
    expect(fine.statusCode).toBe(201);
    expect(fine.json().data.data).toEqual({
      name: '1e400',
      qty: 1,
      price: 1500,
      id: 9007199254740991,
      ratio: 0.1,
    });
    // Prototype poisoning is still the parser's 400.
    expect((await send('/auth/login', '{"__proto__":{"x":1}}')).json().code).toBe('INVALID_JSON');
  });

  describe('a NUL character (\u0000) is a 422 field error wherever text is checked, never a 500', () => {
    const NUL_ERROR = (field: string) =>
      fieldRefusal(field, 'noNullCharacter', 'contains a NUL character (\\u0000), which cannot be stored');

    it('in JSON bodies: data values and keys, user update, unauthenticated register, workflow input', async () => {
      const records = await rowCount('data_records');
      const cases: [string, string, string, string | undefined, string][] = [
        ['POST', `/api/data/${s.configId}`, '{"name":"W\\u0000","qty":1}', s.user.token, 'name'],
        ['POST', `/api/data/${s.configId}`, '{"name":"W","qty":1,"x\\u0000y":1}', s.user.token, 'x\u0000y'],
        [
          'POST',
          `/api/data/${s.configId}`,
          '{"name":"W","qty":1,"a":[{"b":"\\u0000"}]}',
          s.user.token,
          'a.0.b',
        ],
        ['PUT', `/api/users/${s.user.user.id}`, '{"name":"A\\u0000"}', s.user.token, 'name'],
        [
          'POST',
          '/auth/register',
          '{"email":"n@example.com","password":"password-123","name":"\\u0000"}',
          undefined,
          'name',
        ],
        [
          'POST',
          `/api/workflow/${s.configId}/execute`,
          '{"configId":"x","data":{"q":"\\u0000"}}',
          s.user.token,
          'data.q',
        ],
      ];
      for (const [method, url, payload, token, field] of cases) {
        const response = await s.t.request({
          method: method as 'POST',
          url,
          token,
          headers: { 'content-type': 'application/json' },
          payload,
        });
        expect({ url, payload, status: response.statusCode }).toEqual({ url, payload, status: 422 });
        expect(response.json()).toEqual(NUL_ERROR(field));
      }
      expect(await rowCount('data_records')).toBe(records);
      expect(
        await count(
          sql`select count(*)::int as n from users where name like 'A%' and email = ${s.user.user.email}`,
        ),
      ).toBe(0);
    });

    it('in a grid store form insert (values JSON or the raw form field)', async () => {
      const form = (body: string) => send(`/api/data/${s.configId}`, body, s.user.token, FORM);
      const escaped = await form(`values=${encodeURIComponent('{"data.name":"a\\u0000","data.qty":1}')}`);
      expect(escaped.statusCode).toBe(422);
      expect(escaped.json()).toEqual(NUL_ERROR('data.name'));
      const raw = await form(
        `values=${encodeURIComponent('{"data.name":"a')}%00${encodeURIComponent('","data.qty":1}')}`,
      );
      expect(raw.statusCode).toBe(422);
      expect(raw.json()).toEqual(NUL_ERROR('values'));
    });

    it('in list, grid and export filter values', async () => {
      const get = (url: string) => s.t.request({ method: 'GET', url, token: s.admin });
      const filters = encodeURIComponent('{"name":"a\\u0000"}');
      const grid = encodeURIComponent('["name","=","a\\u0000"]');
      const cases: [string, string][] = [
        [`/api/data/${s.configId}?filters=${filters}`, 'filters.name'],
        [`/api/data/${s.configId}?filters[name]=a%00b`, 'filters[name]'],
        [`/api/data/${s.configId}?filter=${grid}`, 'filter'],
        [
          `/api/data/${s.configId}?skip=0&take=10&filter=${encodeURIComponent('[["name","contains","\\u0000"],"or",["city","=","x"]]')}`,
          'filter',
        ],
        [`/api/data/${s.configId}/export?format=json&filter=${grid}`, 'filter'],
        [`/api/data/${s.configId}/export?format=csv&filters=${filters}`, 'filters.name'],
        [`/api/data/${s.configId}/stats?tz=UTC%00`, 'tz'],
      ];
      for (const [url, field] of cases) {
        const response = await get(url);
        expect({ url, status: response.statusCode }).toEqual({ url, status: 422 });
        expect(response.json()).toEqual(NUL_ERROR(field));
      }
    });

    // Last in the file: a second app in the process takes over passport's global JWT strategy, so
    // the first app's tokens stop verifying once the second is closed.
    it('in development the error body carries no SQL and no submitted value', async () => {
      const dev = await createTestApp({ env: { NODE_ENV: 'development' } });
      try {
        const devAdmin = await adminToken(dev);
        const devConfig = await createConfig(dev, devAdmin);
        const response = await postRecord(
          dev,
          devAdmin,
          devConfig,
          '{"name":"secret-value\\u0000","qty":1}',
          {
            'content-type': 'application/json',
          },
        );
        expect(response.statusCode).toBe(422);
        const text = response.body;
        expect(text).not.toMatch(/insert into|select |params:/i);
        expect(text).not.toContain('secret-value');
        expect(response.json().stack).toMatch(/^AppError\n {4}at /);
      } finally {
        await dev.close();
      }
    });
  });
});
