import { useAppSuite } from '../utils/app-suite';
import { errorBody } from '../utils/api-error';
import { createTestApp, type TestApp } from '../utils/test-app';
import { adminToken, createUser } from '../factories/user.factory';
import { databaseThatCanGoAway } from '../utils/database-outage';

describe('platform: health, docs, error body, localization, headers', () => {
  const s = useAppSuite({ env: { CORS_ORIGINS: 'https://app.example.com' }, admin: false, seed: 'once' });
  const get = (url: string, headers?: Record<string, string>, token?: string) =>
    s.t.request({ method: 'GET', url, headers, token });

  it('GET /health answers 200 and /health/ready names the database', async () => {
    expect((await get('/health')).json()).toEqual({ status: 'ok' });
    const ready = await get('/health/ready');
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: 'ok', database: s.t.database.client.driver });
  });

  it('serves Swagger UI and the OpenAPI document with the bearer scheme', async () => {
    expect((await get('/api-docs')).statusCode).toBe(200);
    const doc = (await get('/api-docs-json')).json();
    expect(doc.components.securitySchemes.bearer).toEqual({
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
    });
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/auth/login', '/api/auth/login', '/health']),
    );
    // The list answers in either form; both are documented models.
    expect(doc.paths['/api/data/{configId}'].get.responses['200'].content['application/json'].schema).toEqual(
      {
        oneOf: [{ $ref: '#/components/schemas/RecordPageDto' }, { $ref: '#/components/schemas/GridPageDto' }],
      },
    );
    expect(Object.keys(doc.components.schemas)).toEqual(
      expect.arrayContaining(['GridGroupDto', 'UserResponseDto', 'UserSummaryDto', 'HealthDto', 'StatsDto']),
    );
  });

  it('an unknown route is a 404 in the error body, without stack outside development', async () => {
    const response = await get('/no-such-route');
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual(errorBody(404, { code: 'ROUTE_NOT_FOUND', error: 'No such route.' }));
  });

  it('localizes messages by ?lang=, ?locale= and Accept-Language, falling back to en', async () => {
    const hu = 'Nincs ilyen útvonal.';
    expect((await get('/nope?lang=hu')).json().error).toBe(hu);
    expect((await get('/nope?locale=hu-HU')).json().error).toBe(hu);
    const byHeader = await get('/nope', { 'accept-language': 'de;q=0.9, hu;q=0.8' });
    expect(byHeader.json().error).toBe(hu);
    expect((await get('/nope?lang=xx')).json().error).toBe('No such route.');
    // Given twice, the last value counts, as for every query parameter.
    expect((await get('/nope?lang=en&lang=hu')).json().error).toBe(hu);
  });

  it('DTO validation failures are 422 with validationErrors naming the fields', async () => {
    const response = await s.t.request({
      method: 'POST',
      url: '/auth/register',
      payload: { email: 'bad', name: '', extra: 1 },
    });
    expect(response.statusCode).toBe(422);
    const body = response.json();
    expect(body).toMatchObject(
      errorBody(422, { code: 'VALIDATION_FAILED', error: 'The request is not valid.' }),
    );
    const fields = body.validationErrors.map((e: { field: string }) => e.field);
    expect(fields).toEqual(expect.arrayContaining(['email', 'password', 'name', 'extra']));
    expect(body.validationErrors[0]).toEqual({
      field: expect.any(String),
      rule: expect.any(String),
      message: expect.any(String),
    });
  });

  it('malformed JSON is a 400 INVALID_JSON', async () => {
    const response = await s.t.request({
      method: 'POST',
      url: '/auth/login',
      headers: { 'content-type': 'application/json' },
      payload: '{"email":',
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ success: false, code: 'INVALID_JSON', statusCode: 400 });
  });

  it('401 without a token, 401 with a garbage token, 403 for a role that may not', async () => {
    expect((await get('/auth/me')).json()).toEqual(
      errorBody(401, { code: 'UNAUTHORIZED', error: 'Authentication is required.' }),
    );
    const garbage = await get('/auth/me', {}, 'not.a.jwt');
    expect(garbage.statusCode).toBe(401);
    expect(garbage.json().code).toBe('TOKEN_INVALID');
    const { token } = await createUser(s.t);
    expect((await get('/auth/me', {}, token)).statusCode).toBe(200);
  });

  it('409 for a duplicate e-mail', async () => {
    const payload = { email: 'dup@example.com', password: 'password-123', name: 'Dup' };
    expect((await s.t.request({ method: 'POST', url: '/auth/register', payload })).statusCode).toBe(201);
    const again = await s.t.request({
      method: 'POST',
      url: '/auth/register',
      payload: { ...payload, email: 'DUP@example.com' },
    });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toEqual(
      errorBody(409, { code: 'EMAIL_TAKEN', error: 'This e-mail address is already registered.' }),
    );
  });

  it('echoes a well-formed x-request-id and makes one up otherwise', async () => {
    const echoed = await get('/health', { 'x-request-id': 'abc-123' });
    expect(echoed.headers['x-request-id']).toBe('abc-123');
    const made = await get('/health', { 'x-request-id': 'bad id\u0007' });
    expect(made.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('sets every helmet header, on errors and early refusals too', async () => {
    const helmetHeaders = {
      'content-security-policy':
        "default-src 'self';base-uri 'self';font-src 'self' https: data:;form-action 'self';" +
        "frame-ancestors 'self';img-src 'self' data:;object-src 'none';script-src 'self' 'unsafe-inline';" +
        "script-src-attr 'none';style-src 'self' 'unsafe-inline';upgrade-insecure-requests",
      'cross-origin-opener-policy': 'same-origin',
      'cross-origin-resource-policy': 'same-origin',
      'origin-agent-cluster': '?1',
      'referrer-policy': 'no-referrer',
      'strict-transport-security': 'max-age=31536000; includeSubDomains',
      'x-content-type-options': 'nosniff',
      'x-dns-prefetch-control': 'off',
      'x-download-options': 'noopen',
      'x-frame-options': 'SAMEORIGIN',
      'x-permitted-cross-domain-policies': 'none',
      'x-xss-protection': '0',
    };
    const malformed = await s.t.request({
      method: 'POST',
      url: '/auth/login',
      headers: { 'content-type': 'application/json' },
      payload: '{"email":',
    });
    const responses = [
      [await get('/health'), 200],
      [await get('/api/no-such-route'), 404],
      [await get('/api/configs'), 401],
      [malformed, 400],
    ] as const;
    for (const [response, status] of responses) {
      expect(response.statusCode).toBe(status);
      expect(response.headers).toEqual(expect.objectContaining(helmetHeaders));
    }
  });

  it('allows CORS for a configured origin and not for others', async () => {
    const preflight = (origin: string) =>
      s.t.request({
        method: 'OPTIONS',
        url: '/auth/login',
        headers: { origin, 'access-control-request-method': 'POST' },
      });
    const allowed = await preflight('https://app.example.com');
    expect(allowed.headers['access-control-allow-origin']).toBe('https://app.example.com');
    const denied = await preflight('https://evil.example.com');
    expect(denied.headers['access-control-allow-origin']).toBeUndefined();
  });

  it.each(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'])(
    'a CORS preflight for %s from a configured origin allows the method and the SPA headers',
    async (method) => {
      const requestHeaders =
        'authorization, content-type, accept-language, x-request-id, idempotency-key, prefer, if-match, if-none-match, x-database-position';
      const preflight = (origin: string) =>
        s.t.request({
          method: 'OPTIONS',
          url: '/api/configs/00000000-0000-0000-0000-000000000000',
          headers: {
            origin,
            'access-control-request-method': method,
            'access-control-request-headers': requestHeaders,
          },
        });
      const allowed = await preflight('https://app.example.com');
      expect(allowed.statusCode).toBe(204);
      expect(allowed.headers['access-control-allow-origin']).toBe('https://app.example.com');
      expect(allowed.headers['access-control-allow-credentials']).toBe('true');
      expect(String(allowed.headers['access-control-allow-methods']).split(/,\s*/)).toEqual(
        expect.arrayContaining([method]),
      );
      expect(String(allowed.headers['access-control-allow-headers']).toLowerCase().split(/,\s*/)).toEqual(
        requestHeaders.split(', '),
      );
      const denied = await preflight('https://evil.example.com');
      expect(denied.headers['access-control-allow-origin']).toBeUndefined();
    },
  );

  it('exposes the response headers a cross-origin client reads', async () => {
    const response = await get('/health', { origin: 'https://app.example.com' });
    expect(response.headers['access-control-allow-origin']).toBe('https://app.example.com');
    expect(String(response.headers['access-control-expose-headers']).split(/,\s*/)).toEqual([
      'Content-Disposition',
      'X-Request-Id',
      'Retry-After',
      'Location',
      'ETag',
      'X-Database-Position',
    ]);
  });
});

describe('platform: development mode and limits', () => {
  /** Boots an app with `env` for one test, hands it to `use`, and closes it however the test ends. */
  const withApp = async (env: Record<string, string>, use: (t: TestApp) => Promise<void>) => {
    const t = await createTestApp({ env });
    try {
      await use(t);
    } finally {
      await t.close();
    }
  };

  it('adds stack to error bodies only when NODE_ENV=development', async () => {
    await withApp({ NODE_ENV: 'development' }, async (t) => {
      const body = (await t.request({ method: 'GET', url: '/nope' })).json();
      expect(body.code).toBe('ROUTE_NOT_FOUND');
      expect(typeof body.stack).toBe('string');
    });
  });

  it('answers 413 for a body over BODY_LIMIT', async () => {
    await withApp({ BODY_LIMIT: '1024' }, async (t) => {
      const response = await t.request({
        method: 'POST',
        url: '/auth/login',
        payload: { email: 'a@example.com', password: 'x'.repeat(2000) },
      });
      expect(response.statusCode).toBe(413);
      expect(response.json()).toEqual(
        errorBody(413, { code: 'PAYLOAD_TOO_LARGE', error: 'The request body is too large.' }),
      );
    });
  });

  it('answers 429 on the 101st request in a minute and the 11th authentication request', async () => {
    await withApp({ THROTTLE_LIMIT: '100', THROTTLE_AUTH_LIMIT: '10' }, async (t) => {
      const login = () =>
        t.request({
          method: 'POST',
          url: '/auth/login',
          payload: { email: 'x@example.com', password: 'wrong-pass' },
        });
      for (let i = 0; i < 10; i++) expect((await login()).statusCode).toBe(401);
      const limited = await login();
      expect(limited.statusCode).toBe(429);
      expect(limited.json()).toEqual(
        errorBody(429, { code: 'RATE_LIMITED', error: 'Too many requests; try again later.' }),
      );
      // Eleven requests counted so far against the general limit of 100; the 101st is refused.
      const other = (ip: string) => t.request({ method: 'GET', url: '/api/no-such', remoteAddress: ip });
      expect((await other('10.0.0.9')).statusCode).toBe(404);
    });
  });

  // Behind a proxy the client picks the leftmost X-Forwarded-For entries; only what the trusted
  // proxies appended (the rightmost ones) names the real peer.
  for (const trustProxy of ['10.0.0.0/8', 'uniquelocal']) {
    it(`TRUST_PROXY=${trustProxy}: rotating X-Forwarded-For does not escape the authentication limit`, async () => {
      await withApp(
        { THROTTLE_LIMIT: '1000', THROTTLE_AUTH_LIMIT: '10', TRUST_PROXY: trustProxy },
        async (t) => {
          const login = (i: number, client = '203.0.113.7') =>
            t.request({
              method: 'POST',
              url: '/auth/login',
              remoteAddress: '10.0.0.1',
              headers: { 'x-forwarded-for': `198.51.100.${i}, ${client}` },
              payload: { email: 'x@example.com', password: 'wrong-pass' },
            });
          for (let i = 0; i < 10; i++) expect((await login(i)).statusCode).toBe(401);
          const limited = await login(10);
          expect(limited.statusCode).toBe(429);
          expect(limited.json().code).toBe('RATE_LIMITED');
          expect((await login(11)).statusCode).toBe(429);
          // Another real client behind the same proxy has its own count.
          expect((await login(12, '203.0.113.8')).statusCode).toBe(401);
        },
      );
    });
  }

  // What a hop count (refused at boot) could not tell apart: a client that reaches the service
  // directly, not through a listed proxy, and writes X-Forwarded-For itself.
  it('TRUST_PROXY=10.0.0.0/8: a client connecting directly is counted by its own address, whatever it forwards', async () => {
    await withApp(
      { THROTTLE_LIMIT: '1000', THROTTLE_AUTH_LIMIT: '10', TRUST_PROXY: '10.0.0.0/8' },
      async (t) => {
        const login = (i: number) =>
          t.request({
            method: 'POST',
            url: '/auth/login',
            remoteAddress: '203.0.113.50',
            headers: { 'x-forwarded-for': `198.51.100.${i}, 10.0.0.${i}` },
            payload: { email: 'x@example.com', password: 'wrong-pass' },
          });
        for (let i = 0; i < 10; i++) expect((await login(i)).statusCode).toBe(401);
        const limited = await login(10);
        expect(limited.statusCode).toBe(429);
        expect(limited.json()).toEqual(
          errorBody(429, { code: 'RATE_LIMITED', error: 'Too many requests; try again later.' }),
        );
      },
    );
  });

  it('refuses the 101st request on an API route from one IP, but not from another IP', async () => {
    await withApp({ THROTTLE_LIMIT: '100', THROTTLE_AUTH_LIMIT: '1000' }, async (t) => {
      const me = (remoteAddress: string) => t.request({ method: 'GET', url: '/api/auth/me', remoteAddress });
      for (let i = 0; i < 100; i++) expect((await me('10.1.1.1')).statusCode).toBe(401);
      expect((await me('10.1.1.1')).statusCode).toBe(429);
      expect((await me('10.1.1.2')).statusCode).toBe(401);
    });
  });

  it('answers 503 in the error body when the database is gone', async () => {
    const outage = await databaseThatCanGoAway();
    const t = await createTestApp({ database: outage.database });
    try {
      // A valid token, not yet used (so no process keeps its user): while the database is away it
      // cannot be checked, which is a 503, never a 401 telling the client its token is bad.
      const token = await adminToken(t);
      await outage.takeAway();
      for (const url of ['/api/configs', '/api/auth/me']) {
        const checked = await t.request({ method: 'GET', url, token });
        expect([url, checked.statusCode, checked.json().code]).toEqual([url, 503, 'DATABASE_UNAVAILABLE']);
      }
      // Liveness does not follow the database: a probe must not restart a healthy instance.
      const live = await t.request({ method: 'GET', url: '/health' });
      expect(live.statusCode).toBe(200);
      expect(live.json()).toEqual({ status: 'ok' });
      const ready = await t.request({ method: 'GET', url: '/health/ready' });
      expect(ready.statusCode).toBe(503);
      expect(ready.json()).toEqual(
        errorBody(503, {
          code: 'DATABASE_UNAVAILABLE',
          error: 'The database is unavailable; try again later.',
        }),
      );
      const login = await t.request({
        method: 'POST',
        url: '/auth/login',
        payload: { email: 'a@example.com', password: 'password-123' },
      });
      expect(login.statusCode).toBe(503);
      expect(login.json().code).toBe('DATABASE_UNAVAILABLE');
    } finally {
      await t.close().catch(() => undefined);
      await outage.dispose();
    }
  });
});
