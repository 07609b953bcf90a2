import { type TestUser } from '../../factories/user.factory';
import { type HttpTestServer } from '../../utils/http-test-server';
import { useAppSuite } from '../../utils/app-suite';
import type { TestApp } from '../../utils/test-app';
import { createSteps, recordClock, run } from '../../utils/workflow-api';

const ORDER = { name: 'Ann', qty: 2 };

describe('workflow retries: backoff timing through an injected clock, against a real HTTP server', () => {
  let server: HttpTestServer;
  let t: TestApp;
  let admin: string;
  let user: TestUser;
  let configId: string;
  let clock: ReturnType<typeof recordClock>;
  useAppSuite((suite) => ({ t, partner: server, admin, user, configId } = suite), {
    partner: true,
    users: 1,
    forms: 1,
  });
  beforeEach(() => {
    clock = recordClock(t);
  });
  afterEach(() => clock.restore());

  /** The server answers these statuses in turn (then 200), each with an optional header set. */
  function answer(...replies: (number | [number, Record<string, string>])[]) {
    let next = 0;
    server.handle((_req, res) => {
      const reply = replies[next++] ?? 200;
      const [status, headers] = Array.isArray(reply) ? reply : [reply, {}];
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify({ answer: next }));
    });
  }

  const call = (extra: Record<string, unknown> = {}) => ({
    name: 'call',
    type: 'api',
    config: { url: server.url('/hook'), method: 'POST', payload: { qty: '{{input.qty}}' } },
    ...extra,
  });
  const retrying = (retry: Record<string, unknown>) => ({ config: { retry: { enabled: true, ...retry } } });

  it.each<[string, number[]]>([
    ['exponential', [1000, 4000]],
    ['fixed', [1000, 1000]],
    ['linear', [1000, 2000]],
  ])('%s backoff: 503, 503, 200 succeeds on attempt 3 after waiting %j', async (backoff, waits) => {
    answer(503, 503, 200);
    const id = await createSteps(t, admin, [call()], retrying({ maxAttempts: 3, backoff }));
    const body = await run(t, user.token, id, configId, ORDER);
    expect(body).toMatchObject({
      success: true,
      steps: [{ name: 'call', status: 'success', attempts: 3, result: { status: 200, data: { answer: 3 } } }],
      results: { call: { status: 200, data: { answer: 3 } } },
    });
    expect(server.requests).toHaveLength(3);
    expect(server.requests.map((r) => r.body)).toEqual(Array(3).fill('{"qty":2}'));
    expect(clock.delays).toEqual(waits);
    expect(body.steps[0].attemptLog).toEqual([
      { attempt: 1, status: 'failed', delayMs: 0, durationMs: expect.any(Number), error: expect.any(String) },
      {
        attempt: 2,
        status: 'failed',
        delayMs: waits[0],
        durationMs: expect.any(Number),
        error: expect.any(String),
      },
      { attempt: 3, status: 'success', delayMs: waits[1], durationMs: expect.any(Number) },
    ]);
    expect(body.steps[0].attemptLog[0].error).toMatch(/^HTTP_STATUS: /);
  });

  it('the default backoff is exponential from 1000 ms with 3 attempts; exhausted retries fail the run', async () => {
    answer(503, 503, 503, 503);
    const id = await createSteps(t, admin, [call()], retrying({}));
    const body = await run(t, user.token, id, configId, ORDER);
    expect(body).toMatchObject({
      success: false,
      status: 'failed',
      steps: [
        {
          name: 'call',
          status: 'failed',
          attempts: 3,
          error: { code: 'HTTP_STATUS', details: { status: 503, data: { answer: 3 } } },
        },
      ],
    });
    expect(server.requests).toHaveLength(3);
    expect(clock.delays).toEqual([1000, 4000]);
  });

  it('a 400 answer is not retried: one request, no wait', async () => {
    answer(400, 200);
    const id = await createSteps(t, admin, [call()], retrying({ maxAttempts: 5 }));
    const body = await run(t, user.token, id, configId, ORDER);
    expect(body).toMatchObject({
      success: false,
      steps: [{ status: 'failed', attempts: 1, error: { code: 'HTTP_STATUS', details: { status: 400 } } }],
    });
    expect(server.requests).toHaveLength(1);
    expect(clock.delays).toEqual([]);
  });

  it('without retry.enabled a 503 is tried once', async () => {
    answer(503, 200);
    const id = await createSteps(t, admin, [call()], {
      config: { retry: { maxAttempts: 5, enabled: false } },
    });
    const body = await run(t, user.token, id, configId, ORDER);
    expect(body.steps[0]).toMatchObject({ status: 'failed', attempts: 1 });
    expect(server.requests).toHaveLength(1);
    expect(clock.delays).toEqual([]);
  });

  it('a step’s own retry overrides the workflow’s (and may switch retries off)', async () => {
    answer(503, 503, 503, 503, 503, 503);
    const id = await createSteps(
      t,
      admin,
      [
        call({
          name: 'twice',
          retry: { backoff: 'fixed', maxAttempts: 2, delayMs: 250 },
          onError: 'continue',
        }),
        call({ name: 'once', retry: { enabled: false }, onError: 'continue' }),
        call({ name: 'inherits', onError: 'continue' }),
      ],
      retrying({ maxAttempts: 3, backoff: 'linear', delayMs: 500 }),
    );
    const body = await run(t, user.token, id, configId, ORDER);
    expect(body.steps.map((s: any) => [s.name, s.status, s.attempts])).toEqual([
      ['twice', 'failed', 2],
      ['once', 'failed', 1],
      ['inherits', 'failed', 3],
    ]);
    expect(server.requests).toHaveLength(6);
    expect(clock.delays).toEqual([250, 500, 1000]);
  });

  it('maxDelayMs caps every wait', async () => {
    answer(503, 503, 503, 200);
    const id = await createSteps(t, admin, [call()], retrying({ maxAttempts: 4, maxDelayMs: 2500 }));
    const body = await run(t, user.token, id, configId, ORDER);
    expect(body.steps[0]).toMatchObject({ status: 'success', attempts: 4 });
    expect(server.requests).toHaveLength(4);
    expect(clock.delays).toEqual([1000, 2500, 2500]);
  });

  it('429 with Retry-After: 3 waits 3000 ms, within maxDelayMs', async () => {
    answer([429, { 'retry-after': '3' }], 200);
    const id = await createSteps(t, admin, [call()], retrying({ maxAttempts: 2 }));
    const body = await run(t, user.token, id, configId, ORDER);
    expect(body.steps[0]).toMatchObject({ status: 'success', attempts: 2 });
    expect(server.requests).toHaveLength(2);
    expect(clock.delays).toEqual([3000]);

    server.reset();
    clock.delays.length = 0;
    answer([429, { 'retry-after': '3' }], 200);
    const capped = await createSteps(t, admin, [call()], retrying({ maxAttempts: 2, maxDelayMs: 2000 }));
    expect((await run(t, user.token, capped, configId, ORDER)).success).toBe(true);
    expect(clock.delays).toEqual([2000]);
  });

  it('a dropped connection (network error) is retried with the same backoff', async () => {
    const id = await createSteps(
      t,
      admin,
      [{ name: 'down', type: 'api', config: { url: server.url('/hook') } }],
      retrying({ maxAttempts: 2, backoff: 'fixed' }),
    );
    // The server reads each request and drops the connection without answering.
    server.handle((req) => req.socket.destroy());
    const body = await run(t, user.token, id, configId, ORDER);
    expect(body.steps[0]).toMatchObject({
      status: 'failed',
      attempts: 2,
      error: { code: 'NETWORK_ERROR' },
    });
    expect(server.requests).toHaveLength(2);
    expect(clock.delays).toEqual([1000]);
  });

  it('a call that times out is retried (TIMEOUT); an answer over maxResponseBytes is not', async () => {
    // Never answers: the call's own timeout ends each attempt. A second long, so that a loaded
    // machine still gets each request to the server before its time is up (100 ms once did not).
    server.handle(() => undefined);
    const slow = await createSteps(
      t,
      admin,
      [{ name: 'slow', type: 'api', config: { url: server.url('/slow'), timeoutMs: 1000 } }],
      retrying({ maxAttempts: 2, backoff: 'fixed' }),
    );
    const timedOut = await run(t, user.token, slow, configId, ORDER);
    expect(timedOut.steps[0]).toMatchObject({ status: 'failed', attempts: 2, error: { code: 'TIMEOUT' } });
    expect(server.requests).toHaveLength(2);
    expect(clock.delays).toEqual([1000]);

    server.reset();
    clock.delays.length = 0;
    server.handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('x'.repeat(1000));
    });
    const big = await createSteps(
      t,
      admin,
      [{ name: 'big', type: 'api', config: { url: server.url('/big'), maxResponseBytes: 100 } }],
      retrying({ maxAttempts: 3 }),
    );
    const tooLarge = await run(t, user.token, big, configId, ORDER);
    expect(tooLarge.steps[0]).toMatchObject({
      status: 'failed',
      attempts: 1,
      error: { code: 'RESPONSE_TOO_LARGE', details: { maxResponseBytes: 100 } },
    });
    expect(server.requests).toHaveLength(1);
    expect(clock.delays).toEqual([]);
  });
});
