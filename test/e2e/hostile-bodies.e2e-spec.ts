import { sql } from 'drizzle-orm';
import { adminToken, createUser, type TestUser } from '../factories/user.factory';
import { createConfig, ORDER_FORM } from '../factories/config.factory';
import { createTestApp, type TestApp } from '../utils/test-app';

/** `{"a":{"a":…1…}}` nested `depth` levels, as JSON text (JSON.stringify itself would overflow). */
function nested(depth: number): string {
  return '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

const TOO_DEEP = {
  success: false,
  error: 'The request body is nested too deeply (at most 64 levels).',
  code: 'BODY_TOO_DEEP',
  statusCode: 400,
};

describe('hostile bodies: nesting depth and malformed Unicode', () => {
  let t: TestApp;
  let admin: string;
  let alice: TestUser;
  let configId: string;
  beforeAll(async () => {
    t = await createTestApp();
    admin = await adminToken(t);
    alice = await createUser(t, { email: 'alice@example.com' });
    configId = await createConfig(t, admin);
  });
  afterAll(() => t.close());

  const count = async (query: ReturnType<typeof sql>) =>
    ((await t.database.client.db.execute(query)) as any).rows[0].n as number;
  const send = (url: string, body: string, token?: string) =>
    t.request({ method: 'POST', url, token, headers: { 'content-type': 'application/json' }, payload: body });

  it('a 5,000-deep body is refused with 400 BODY_TOO_DEEP before any processing, nothing stored', async () => {
    const users = await count(sql`select count(*)::int as n from users`);
    const configs = await count(sql`select count(*)::int as n from form_configs`);
    const deep = nested(5000);
    const cases: [string, string, string?][] = [
      ['/auth/login', `{"email":"a@example.com","password":"password-123","x":${deep}}`],
      ['/auth/register', `{"email":"deep@example.com","password":"password-123","name":"D","x":${deep}}`],
      ['/api/auth/register', deep],
      [`/api/data/${configId}`, `{"name":"W","qty":1,"x":${deep}}`, alice.token],
      ['/api/configs', `{"title":"Deep","type":"form","schema":${deep}}`, admin],
    ];
    for (const [url, body, token] of cases) {
      const response = await send(url, body, token);
      expect({ url, status: response.statusCode }).toEqual({ url, status: 400 });
      expect(response.json()).toEqual(TOO_DEEP);
    }
    expect(await count(sql`select count(*)::int as n from users`)).toBe(users);
    expect(await count(sql`select count(*)::int as n from form_configs`)).toBe(configs);
    expect(await count(sql`select count(*)::int as n from data_records`)).toBe(0);
  });

  it('the message is localized and the limit is BODY_MAX_DEPTH: 64 levels pass the check, 65 do not', async () => {
    const hu = await t.request({
      method: 'POST',
      url: '/auth/login?lang=hu',
      headers: { 'content-type': 'application/json' },
      payload: nested(100),
    });
    expect(hu.statusCode).toBe(400);
    expect(hu.json().error).toBe('A kérés törzse túl mélyen egymásba ágyazott (legfeljebb 64 szint).');
    // 64 levels reach validation (422: unknown property), 65 are refused before it.
    expect((await send('/auth/login', nested(64))).json().code).toBe('VALIDATION_FAILED');
    expect((await send('/auth/login', nested(65))).json().code).toBe('BODY_TOO_DEEP');
    // Arrays count as levels too.
    expect((await send('/auth/login', '['.repeat(65) + ']'.repeat(65))).json().code).toBe('BODY_TOO_DEEP');
    // A realistic configuration is far from the limit.
    expect(
      (await t.request({ method: 'POST', url: '/api/configs', token: admin, payload: ORDER_FORM }))
        .statusCode,
    ).toBe(201);
  });

  it('a lone UTF-16 surrogate is a 422 field error, not a 500', async () => {
    const users = await count(sql`select count(*)::int as n from users`);
    const response = await send(
      '/auth/register',
      '{"email":"\\ud800x@example.com","password":"password-123","name":"S"}',
    );
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({
      success: false,
      error: 'The request is not valid.',
      code: 'VALIDATION_FAILED',
      statusCode: 422,
      validationErrors: [
        {
          field: 'email',
          rule: 'wellFormedUnicode',
          message: 'contains malformed Unicode (a lone surrogate)',
        },
      ],
    });
    const nestedField = await send(
      `/api/data/${configId}`,
      '{"name":"W","qty":1,"address":{"lines":["ok","\\udc00"]}}',
      alice.token,
    );
    expect(nestedField.statusCode).toBe(422);
    expect(nestedField.json().validationErrors).toEqual([
      {
        field: 'address.lines.1',
        rule: 'wellFormedUnicode',
        message: 'contains malformed Unicode (a lone surrogate)',
      },
    ]);
    const inKey = await send('/auth/login', '{"\\ud83d":"x","email":"a@example.com","password":"p"}');
    expect(inKey.statusCode).toBe(422);
    expect(await count(sql`select count(*)::int as n from users`)).toBe(users);
    // A well-formed pair (an emoji) is fine.
    const emoji = await send(
      '/auth/register',
      '{"email":"emoji@example.com","password":"password-123","name":"\\ud83d\\ude00"}',
    );
    expect(emoji.statusCode).toBe(201);
  });
});
