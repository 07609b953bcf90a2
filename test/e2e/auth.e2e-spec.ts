import { createHmac, randomUUID } from 'node:crypto';
import { adminToken, createUser, deactivateUser } from '../factories/user.factory';
import { useAppSuite } from '../utils/app-suite';
import { errorBody } from '../utils/error-body';
import { createTestApp, TEST_JWT_SECRET } from '../utils/test-app';
import { createTestDatabase } from '../utils/test-database';

const base64url = (value: object | string) =>
  Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
function signToken(header: object, payload: object, secret = TEST_JWT_SECRET): string {
  const unsigned = `${base64url(header)}.${base64url(payload)}`;
  return `${unsigned}.${createHmac('sha256', secret).update(unsigned).digest('base64url')}`;
}

describe.each(['/auth', '/api/auth'])('auth routes under %s', (prefix) => {
  const s = useAppSuite({ admin: false });

  const register = (payload: object) => s.t.request({ method: 'POST', url: `${prefix}/register`, payload });
  const login = (email: string, password: string) =>
    s.t.request({ method: 'POST', url: `${prefix}/login`, payload: { email, password } });
  const me = (token: string) => s.t.request({ method: 'GET', url: `${prefix}/me`, token });

  it('register answers 201 with a token and the user; the e-mail is stored lower-cased', async () => {
    const response = await register({ email: 'Jane@Example.com', password: 'password-123', name: 'Jane' });
    expect(response.statusCode).toBe(201);
    expect(response.json()).toEqual({
      token: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/),
      user: { id: expect.any(String), email: 'jane@example.com', name: 'Jane', role: 'user' },
    });
    expect((await me(response.json().token)).json()).toMatchObject({
      email: 'jane@example.com',
      role: 'user',
      isActive: true,
      siteId: null,
    });
  });

  it('register refuses a short password (422) and a duplicate e-mail (409)', async () => {
    expect((await register({ email: 'a@example.com', password: 'short', name: 'A' })).statusCode).toBe(422);
    expect((await register({ email: 'a@example.com', password: 'password-123', name: 'A' })).statusCode).toBe(
      201,
    );
    expect(
      (await register({ email: 'A@example.com', password: 'password-123', name: 'A' })).json().code,
    ).toBe('EMAIL_TAKEN');
  });

  it('two registrations racing for one e-mail: one 201, one 409 EMAIL_TAKEN', async () => {
    const payload = { email: 'race@example.com', password: 'password-123', name: 'Race' };
    const answers = await Promise.all([register(payload), register(payload)]);
    expect(answers.map((r) => r.statusCode).sort()).toEqual([201, 409]);
    expect(answers.find((r) => r.statusCode === 409)!.json()).toEqual(
      errorBody(409, 'EMAIL_TAKEN', 'This e-mail address is already registered.'),
    );
  });

  it('two users racing to take one e-mail by update: one 200, one 409 EMAIL_TAKEN', async () => {
    const [first, second] = [await createUser(s.t), await createUser(s.t)];
    const answers = await Promise.all(
      [first, second].map((caller) =>
        s.t.request({
          method: 'PUT',
          url: `/api/users/${caller.user.id}`,
          token: caller.token,
          payload: { email: 'wanted@example.com' },
        }),
      ),
    );
    expect(answers.map((r) => r.statusCode).sort()).toEqual([200, 409]);
    expect(answers.find((r) => r.statusCode === 409)!.json().code).toBe('EMAIL_TAKEN');
  });

  it('login answers {token, user:{id,email,name,role}}; unknown e-mail and wrong password get one 401', async () => {
    const ok = await login('admin@example.com', 'admin12345');
    expect(ok.statusCode).toBe(200);
    expect(ok.json().user).toEqual({
      id: expect.any(String),
      email: 'admin@example.com',
      name: 'Administrator',
      role: 'admin',
    });
    const wrong = await login('admin@example.com', 'wrong-password');
    const unknown = await login('nobody@example.com', 'wrong-password');
    expect(wrong.statusCode).toBe(401);
    expect(unknown.statusCode).toBe(401);
    expect(wrong.json()).toEqual(unknown.json());
    expect(wrong.json()).toEqual(errorBody(401, 'INVALID_CREDENTIALS', 'Invalid e-mail or password.'));
  });

  it('logout blacklists the token; other tokens of the user keep working', async () => {
    const first = (await login('admin@example.com', 'admin12345')).json().token;
    const second = (await login('admin@example.com', 'admin12345')).json().token;
    const out = await s.t.request({ method: 'POST', url: `${prefix}/logout`, token: first });
    expect(out.statusCode).toBe(200);
    expect(out.json()).toEqual({ success: true });
    expect((await me(first)).json().code).toBe('TOKEN_INVALID');
    expect((await me(second)).statusCode).toBe(200);
  });

  it('change-password revokes earlier tokens and returns a fresh one', async () => {
    const { user, token, password } = await createUser(s.t, { email: 'pw@example.com' });
    const changePassword = (currentPassword: string) =>
      s.t.request({
        method: 'POST',
        url: `${prefix}/change-password`,
        token,
        payload: { currentPassword, newPassword: 'new-password-1' },
      });
    const wrong = await changePassword('not-it');
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json().code).toBe('CURRENT_PASSWORD_INVALID');
    const changed = await changePassword(password);
    expect(changed.statusCode).toBe(200);
    expect(changed.json().user.id).toBe(user.id);
    expect((await me(token)).statusCode).toBe(401);
    expect((await me(changed.json().token)).statusCode).toBe(200);
    expect((await login('pw@example.com', password)).statusCode).toBe(401);
    expect((await login('pw@example.com', 'new-password-1')).statusCode).toBe(200);
  });

  it('a deactivated user cannot log in and their tokens stop working', async () => {
    const { user, token, password } = await createUser(s.t, { email: 'gone@example.com' });
    await deactivateUser(s.t, await adminToken(s.t), user.id);
    expect((await me(token)).statusCode).toBe(401);
    expect((await login('gone@example.com', password)).json().code).toBe('USER_INACTIVE');
  });
});

describe('forged and stale tokens', () => {
  const s = useAppSuite({ admin: false, users: 1, seed: 'once' });

  const now = () => Math.floor(Date.now() / 1000);
  const claims = (overrides: object = {}) => ({
    sub: s.user.user.id,
    role: 'admin',
    email: 'x@example.com',
    siteId: null,
    jti: randomUUID(),
    ver: 0,
    iat: now(),
    exp: now() + 600,
    ...overrides,
  });
  const cases: [string, () => string][] = [
    ['alg none', () => `${base64url({ alg: 'none', typ: 'JWT' })}.${base64url(claims())}.`],
    ['wrong signature', () => signToken({ alg: 'HS256', typ: 'JWT' }, claims(), 'another-secret-0123456789')],
    [
      'expired',
      () => signToken({ alg: 'HS256', typ: 'JWT' }, claims({ iat: now() - 7200, exp: now() - 3600 })),
    ],
    ['unknown user', () => signToken({ alg: 'HS256', typ: 'JWT' }, claims({ sub: randomUUID() }))],
    ['HS512 instead of HS256', () => signToken({ alg: 'HS512', typ: 'JWT' }, claims())],
    ['stale token version', () => signToken({ alg: 'HS256', typ: 'JWT' }, claims({ ver: 7 }))],
    ['not a JWT', () => 'garbage'],
  ];
  it.each(cases)('%s gives 401', async (_name, make) => {
    const response = await s.t.request({ method: 'GET', url: '/auth/me', token: make() });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toMatchObject({ success: false, statusCode: 401 });
  });

  // Signed with the real key, so only the claims can tell them apart from a token the service issued.
  const withoutClaim = (name: string) => {
    const all: Record<string, unknown> = claims();
    delete all[name];
    return signToken({ alg: 'HS256', typ: 'JWT' }, all);
  };
  const oddlySigned: [string, () => string][] = [
    ['without exp (it would never expire)', () => withoutClaim('exp')],
    ['without iat', () => withoutClaim('iat')],
    ['with an exp no date can hold', () => signToken({ alg: 'HS256', typ: 'JWT' }, claims({ exp: 1e13 }))],
    ['with exp before iat', () => signToken({ alg: 'HS256', typ: 'JWT' }, claims({ iat: now() + 700 }))],
    ['without jti', () => withoutClaim('jti')],
    [
      'with a 5000-character jti',
      () => signToken({ alg: 'HS256', typ: 'JWT' }, claims({ jti: 'j'.repeat(5000) })),
    ],
    [
      'with a sub that is no user id',
      () => signToken({ alg: 'HS256', typ: 'JWT' }, claims({ sub: 'nobody' })),
    ],
  ];
  it.each(oddlySigned)(
    'a token signed with the key but %s is a 401 TOKEN_INVALID, on a read and on logout (never a 500)',
    async (_name, make) => {
      const token = make();
      for (const [method, url] of [
        ['GET', '/auth/me'],
        ['POST', '/auth/logout'],
        ['GET', '/auth/me'],
      ] as const) {
        const response = await s.t.request({ method, url, token });
        expect({ url, status: response.statusCode, body: response.json() }).toEqual({
          url,
          status: 401,
          body: errorBody(401, 'TOKEN_INVALID', 'The access token is invalid or has expired.'),
        });
      }
    },
  );

  it('a correctly signed token of a real user works, and its role comes from the stored user, not the claim', async () => {
    const signed = () => signToken({ alg: 'HS256', typ: 'JWT' }, claims());
    const response = await s.t.request({ method: 'GET', url: '/auth/me', token: signed() });
    expect(response.statusCode).toBe(200);
    expect(response.json().role).toBe('user');
    const admin = await s.t.request({ method: 'GET', url: '/api/users', token: signed() });
    expect(admin.statusCode).toBe(403);
  });
});

describe('a token verified once (remembered by the process)', () => {
  const s = useAppSuite({ seed: 'once' });

  const me = (token: string) => s.t.request({ method: 'GET', url: '/auth/me', token });
  const now = () => Math.floor(Date.now() / 1000);

  it('still expires: accepted until its exp, then 401', async () => {
    const { user } = await createUser(s.t);
    const exp = now() + 2;
    const token = signToken(
      { alg: 'HS256', typ: 'JWT' },
      {
        sub: user.id,
        role: 'user',
        email: user.email,
        siteId: null,
        jti: randomUUID(),
        ver: 0,
        iat: now(),
        exp,
      },
    );
    expect((await me(token)).statusCode).toBe(200);
    expect((await me(token)).statusCode).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, (exp + 1) * 1000 - Date.now()));
    const expired = await me(token);
    expect(expired.statusCode).toBe(401);
    expect(expired.json()).toMatchObject({ success: false, code: 'TOKEN_INVALID', statusCode: 401 });
  });

  it('a variant of a remembered token (one character of its signature changed) is verified, and refused', async () => {
    const { admin } = s;
    expect((await me(admin)).statusCode).toBe(200);
    const last = admin.at(-2) === 'A' ? 'B' : 'A';
    const tampered = `${admin.slice(0, -2)}${last}${admin.at(-1)}`;
    expect((await me(tampered)).statusCode).toBe(401);
    expect((await me(admin)).statusCode).toBe(200);
  });

  it('is still checked against logout, deactivation and password changes on every request', async () => {
    const { user, token, password } = await createUser(s.t);
    expect((await me(token)).statusCode).toBe(200);
    expect((await s.t.request({ method: 'POST', url: '/auth/logout', token })).statusCode).toBe(200);
    expect((await me(token)).statusCode).toBe(401);
    const second = (
      await s.t.request({ method: 'POST', url: '/auth/login', payload: { email: user.email, password } })
    ).json().token as string;
    expect((await me(second)).statusCode).toBe(200);
    await deactivateUser(s.t, s.admin, user.id);
    expect((await me(second)).statusCode).toBe(401);
  });
});

describe('the logout blacklist survives a restart and is shared by instances', () => {
  it('after a restart on the same database (or Redis), a logged-out token stays refused', async () => {
    const database = await createTestDatabase();
    const env = { REDIS_PREFIX: `restart-${randomUUID()}:` };
    const first = await createTestApp({ database, env });
    const token = await adminToken(first);
    expect((await first.request({ method: 'POST', url: '/auth/logout', token })).statusCode).toBe(200);
    await first.close();
    const second = await createTestApp({ database, env });
    try {
      expect((await second.request({ method: 'GET', url: '/auth/me', token })).statusCode).toBe(401);
    } finally {
      await second.close();
      await database.close();
    }
  });

  const withRedis = process.env.TEST_REDIS_URL ? it : it.skip;
  withRedis('two instances sharing Redis see each other’s logouts', async () => {
    const database = await createTestDatabase();
    const env = { REDIS_PREFIX: `shared-${randomUUID()}:`, CACHE_ENABLED: 'true' };
    const a = await createTestApp({ database, env });
    const b = await createTestApp({ database, env });
    try {
      const token = await adminToken(a);
      expect((await b.request({ method: 'GET', url: '/auth/me', token })).statusCode).toBe(200);
      expect((await a.request({ method: 'POST', url: '/auth/logout', token })).statusCode).toBe(200);
      expect((await b.request({ method: 'GET', url: '/auth/me', token })).statusCode).toBe(401);
    } finally {
      await a.close();
      await b.close();
      await database.close();
    }
  });
});
