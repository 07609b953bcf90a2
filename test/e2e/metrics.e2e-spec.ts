import { MetricsServer } from '../../src/common/metrics/metrics-server';
import { adminToken } from '../factories/user.factory';
import { createConfig } from '../factories/config.factory';
import { createTestApp, type TestApp } from '../utils/test-app';

/** The value of one sample line (`name{labels} value`) whose name and labels contain every part. */
function sample(text: string, ...parts: string[]): number | undefined {
  const line = text.split('\n').find((l) => !l.startsWith('#') && parts.every((part) => l.includes(part)));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('GET /metrics', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { THROTTLE_AUTH_LIMIT: '2' } });
  });
  afterAll(() => t.close());

  it('serves Prometheus text with live request, database, rate-limit and process families, without a token', async () => {
    const token = await adminToken(t);
    const configId = await createConfig(t, token);
    const created = await t.request({
      method: 'POST',
      url: `/api/data/${configId}`,
      token,
      payload: { name: 'A', qty: 1, price: 2 },
    });
    expect(created.statusCode).toBe(201);
    const login = () =>
      t.request({
        method: 'POST',
        url: '/auth/login',
        payload: { email: 'x@example.com', password: 'wrong-one' },
      });
    const statuses = [(await login()).statusCode, (await login()).statusCode, (await login()).statusCode];
    expect(statuses).toContain(429);

    const response = await t.request({ method: 'GET', url: '/metrics' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = response.body;
    expect(
      sample(
        text,
        'fdws_http_request_duration_seconds_count{',
        'method="POST"',
        'route="/api/data/:configId"',
        'status="201"',
      ),
    ).toBe(1);
    expect(sample(text, 'fdws_rate_limit_refusals_total{', 'route="/auth/login"')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'fdws_db_pool_connections{', 'state="waiting"')).toBe(0);
    expect(sample(text, 'fdws_db_errors_total{', 'kind="query"')).toBe(0);
    expect(sample(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(text).toContain('# TYPE nodejs_eventloop_lag_seconds gauge');
    expect(text).toContain('# TYPE nodejs_gc_duration_seconds histogram');
    if (t.config.redisUrl) expect(sample(text, 'fdws_redis_up')).toBe(1);
    // The scrape itself is not rate limited and never counted under a URL with ids in it.
    expect(text).not.toContain(configId);
  });
});

describe('GET /metrics with METRICS_TOKEN', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { METRICS_TOKEN: 'scrape-secret-123' } });
  });
  afterAll(() => t.close());

  it('answers 401 without the bearer token or with a wrong one, 200 with it', async () => {
    const without = await t.request({ method: 'GET', url: '/metrics' });
    expect(without.statusCode).toBe(401);
    expect(without.json()).toMatchObject({ success: false, code: 'UNAUTHORIZED', statusCode: 401 });
    const wrong = await t.request({
      method: 'GET',
      url: '/metrics',
      headers: { authorization: 'Bearer nope' },
    });
    expect(wrong.statusCode).toBe(401);
    const right = await t.request({
      method: 'GET',
      url: '/metrics',
      headers: { authorization: 'Bearer scrape-secret-123' },
    });
    expect(right.statusCode).toBe(200);
    expect(right.body).toContain('fdws_http_request_duration_seconds');
  });
});

describe('METRICS_ENABLED=false and METRICS_PORT', () => {
  it('METRICS_ENABLED=false: /metrics is 404', async () => {
    const t = await createTestApp({ env: { METRICS_ENABLED: 'false' } });
    try {
      const response = await t.request({ method: 'GET', url: '/metrics' });
      expect(response.statusCode).toBe(404);
      expect(response.json().code).toBe('ROUTE_NOT_FOUND');
    } finally {
      await t.close();
    }
  });

  it('METRICS_PORT: served on that port only (404 on the main port)', async () => {
    const t = await createTestApp({ env: { METRICS_PORT: '0', HOST: '127.0.0.1' } });
    try {
      expect((await t.request({ method: 'GET', url: '/metrics' })).statusCode).toBe(404);
      const port = t.app.get(MetricsServer).port;
      expect(port).toEqual(expect.any(Number));
      const response = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(response.status).toBe(200);
      expect(await response.text()).toContain('# TYPE fdws_db_pool_connections gauge');
      expect((await fetch(`http://127.0.0.1:${port}/other`)).status).toBe(404);
    } finally {
      await t.close();
    }
  });
});
