import { MetricsServer } from '../../src/common/metrics/metrics-server';
import { createRecord } from '../factories/record.factory';
import { createConfig } from '../factories/config.factory';
import { ConfigValidationError, loadConfig } from '../../src/config/app-config';
import { createTestApp, testEnv } from '../utils/test-app';
import { errorBody, expectError } from '../utils/api-error';
import { useAppSuite } from '../utils/app-suite';
import { createSteps, execute, run } from '../utils/workflow-api';

/** The value of one sample line (`name{labels} value`) whose name and labels contain every part. */
function sample(text: string, ...parts: string[]): number | undefined {
  const line = text.split('\n').find((l) => !l.startsWith('#') && parts.every((part) => l.includes(part)));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

/** The parts of the sample counting records created through the API (201s of the create route). */
const RECORDS_CREATED = [
  'fdws_http_request_duration_seconds_count{',
  'method="POST"',
  'route="/api/data/:configId"',
  'status="201"',
];

describe('GET /metrics', () => {
  // No queue workers: a queued run stays queued, so the queue gauges have something to show.
  const s = useAppSuite({ env: { THROTTLE_AUTH_LIMIT: '2', WORKFLOW_WORKERS: '0' }, seed: 'once' });

  it('serves Prometheus text with live request, database, rate-limit and process families, without a token', async () => {
    const configId = await createConfig(s.t, s.admin);
    await createRecord(s.t, s.admin, configId, { name: 'A', qty: 1, price: 2 });
    const login = () =>
      s.t.request({
        method: 'POST',
        url: '/auth/login',
        payload: { email: 'x@example.com', password: 'wrong-one' },
      });
    const statuses = [(await login()).statusCode, (await login()).statusCode, (await login()).statusCode];
    expect(statuses).toContain(429);

    const response = await s.t.request({ method: 'GET', url: '/metrics' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = response.body;
    expect(sample(text, ...RECORDS_CREATED)).toBe(1);
    expect(sample(text, 'fdws_rate_limit_refusals_total{', 'route="/auth/login"')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'fdws_db_pool_connections{', 'state="waiting"')).toBe(0);
    expect(sample(text, 'fdws_db_errors_total{', 'kind="query"')).toBe(0);
    expect(sample(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(text).toContain('# TYPE nodejs_eventloop_lag_seconds gauge');
    expect(text).toContain('# TYPE nodejs_gc_duration_seconds histogram');
    if (s.t.config.redisUrl) expect(sample(text, 'fdws_redis_up')).toBe(1);
    // The scrape itself is not rate limited and never counted under a URL with ids in it.
    expect(text).not.toContain(configId);
  });

  it('shows workflow runs, step durations, the queue and the outbox with live values', async () => {
    const configId = await createConfig(s.t, s.admin);
    const mail = { email: { to: 'ops@example.com', subject: 'New {{input.name}}' } };
    const workflowId = await createSteps(s.t, s.admin, [
      { name: 'store', type: 'save' },
      { name: 'mail', type: 'notify', config: mail },
    ]);
    expect(await run(s.t, s.admin, workflowId, configId, { name: 'B', qty: 1, price: 2 })).toMatchObject({
      status: 'success',
    });
    const async = { prefer: 'respond-async' };
    const queued = await execute(s.t, s.admin, workflowId, configId, { name: 'C', qty: 1, price: 2 }, async);
    expect(queued.statusCode).toBe(202);
    await createRecord(s.t, s.admin, configId, { name: 'D', qty: 1, price: 2 });

    const text = (await s.t.request({ method: 'GET', url: '/metrics' })).body;
    const workflow = `workflow="${workflowId}"`;
    expect(sample(text, 'fdws_workflow_runs_started_total{', workflow, 'mode="sync"')).toBe(1);
    expect(sample(text, 'fdws_workflow_runs_started_total{', workflow, 'mode="async"')).toBe(1);
    expect(sample(text, 'fdws_workflow_runs_finished_total{', workflow, 'status="success"')).toBe(1);
    for (const type of ['save', 'notify'])
      expect(
        sample(text, 'fdws_workflow_step_duration_seconds_count{', `type="${type}"`, 'status="success"'),
      ).toBe(1);
    expect(sample(text, 'fdws_workflow_queue_runs{', 'state="queued"')).toBe(1);
    expect(sample(text, 'fdws_workflow_queue_runs{', 'state="due"')).toBe(1);
    expect(sample(text, 'fdws_workflow_queue_runs{', 'state="running"')).toBe(0);
    expect(sample(text, 'fdws_workflow_queue_oldest_due_seconds ')).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'fdws_workflow_queue_oldest_due_seconds ')).toBeLessThan(60);
    // The notify step's mail, committed by the run and sent at once (no SMTP: a file in DATA_DIR/outbox).
    expect(sample(text, 'fdws_workflow_outbox_effects{', 'state="sent"')).toBe(1);
    expect(sample(text, 'fdws_workflow_outbox_effects{', 'state="pending"')).toBe(0);
    expect(sample(text, 'fdws_workflow_outbox_effects{', 'state="failed"')).toBe(0);
    expect(sample(text, ...RECORDS_CREATED)).toBeGreaterThanOrEqual(1);
  });
});

describe('GET /metrics with METRICS_TOKEN', () => {
  const s = useAppSuite({ env: { METRICS_TOKEN: 'scrape-secret-123' }, admin: false, seed: 'once' });

  it('answers 401 without the bearer token or with a wrong one, 200 with it', async () => {
    const without = await s.t.request({ method: 'GET', url: '/metrics' });
    expect(without.statusCode).toBe(401);
    expect(without.json()).toMatchObject(errorBody(401, { code: 'UNAUTHORIZED' }));
    const wrong = await s.t.request({
      method: 'GET',
      url: '/metrics',
      headers: { authorization: 'Bearer nope' },
    });
    expect(wrong.statusCode).toBe(401);
    const right = await s.t.request({
      method: 'GET',
      url: '/metrics',
      headers: { authorization: 'Bearer scrape-secret-123' },
    });
    expect(right.statusCode).toBe(200);
    expect(right.body).toContain('fdws_http_request_duration_seconds');
  });
});

describe('/metrics in production (NODE_ENV=production)', () => {
  it('without METRICS_TOKEN or METRICS_PORT the service does not boot: one problem says what to set', () => {
    let caught: unknown;
    try {
      loadConfig(testEnv({ NODE_ENV: 'production' }));
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConfigValidationError);
    expect((caught as ConfigValidationError).problems).toEqual([
      'METRICS_TOKEN or METRICS_PORT is required when NODE_ENV=production and METRICS_ENABLED=true ' +
        '(/metrics must not be open to anyone on the main port); or set METRICS_ENABLED=false',
    ]);
  });

  it('with METRICS_TOKEN it boots, and the main port answers /metrics only with the token', async () => {
    const t = await createTestApp({ env: { NODE_ENV: 'production', METRICS_TOKEN: 'scrape-secret-123' } });
    try {
      const without = await t.request({ method: 'GET', url: '/metrics' });
      expectError(without, 401, { code: 'UNAUTHORIZED', error: expect.any(String) });
      const right = await t.request({
        method: 'GET',
        url: '/metrics',
        headers: { authorization: 'Bearer scrape-secret-123' },
      });
      expect(right.statusCode).toBe(200);
    } finally {
      await t.close();
    }
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
