import { useAppSuite } from '../../utils/app-suite';
import { createSteps, failedRun, recordClock, run } from '../../utils/workflow-api';

const ORDER = { name: 'Ann', qty: 2 };

describe('workflow retries: backoff timing through an injected clock, against a real HTTP server', () => {
  let clock: ReturnType<typeof recordClock>;
  const s = useAppSuite({ partner: true, users: 1, forms: 1 });
  beforeEach(() => {
    clock = recordClock(s.t);
  });
  afterEach(() => clock.restore());

  /** The server answers these statuses in turn (then 200), each with an optional header set. */
  function answer(...replies: (number | [number, Record<string, string>])[]) {
    let next = 0;
    s.partner.handle((_req, res) => {
      const reply = replies[next++] ?? 200;
      const [status, headers] = Array.isArray(reply) ? reply : [reply, {}];
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify({ answer: next }));
    });
  }

  const call = (extra: Record<string, unknown> = {}) => ({
    name: 'call',
    type: 'api',
    config: { url: s.partner.url('/hook'), method: 'POST', payload: { qty: '{{input.qty}}' } },
    ...extra,
  });
  const retrying = (retry: Record<string, unknown>) => ({ config: { retry: { enabled: true, ...retry } } });

  it.each<[string, number[]]>([
    ['exponential', [1000, 4000]],
    ['fixed', [1000, 1000]],
    ['linear', [1000, 2000]],
  ])('%s backoff: 503, 503, 200 succeeds on attempt 3 after waiting %j', async (backoff, waits) => {
    answer(503, 503, 200);
    const id = await createSteps(s.t, s.admin, [call()], retrying({ maxAttempts: 3, backoff }));
    const body = await run(s.t, s.user.token, id, s.configId, ORDER);
    expect(body).toMatchObject({
      success: true,
      steps: [{ name: 'call', status: 'success', attempts: 3, result: { status: 200, data: { answer: 3 } } }],
      results: { call: { status: 200, data: { answer: 3 } } },
    });
    expect(s.partner.requests).toHaveLength(3);
    expect(s.partner.requests.map((r) => r.body)).toEqual(Array(3).fill('{"qty":2}'));
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
    const id = await createSteps(s.t, s.admin, [call()], retrying({}));
    const body = await run(s.t, s.user.token, id, s.configId, ORDER);
    expect(body).toMatchObject(
      failedRun({
        name: 'call',
        status: 'failed',
        attempts: 3,
        error: { code: 'HTTP_STATUS', details: { status: 503, data: { answer: 3 } } },
      }),
    );
    expect(s.partner.requests).toHaveLength(3);
    expect(clock.delays).toEqual([1000, 4000]);
  });

  it('a 400 answer is not retried: one request, no wait', async () => {
    answer(400, 200);
    const id = await createSteps(s.t, s.admin, [call()], retrying({ maxAttempts: 5 }));
    const body = await run(s.t, s.user.token, id, s.configId, ORDER);
    expect(body).toMatchObject({
      success: false,
      steps: [{ status: 'failed', attempts: 1, error: { code: 'HTTP_STATUS', details: { status: 400 } } }],
    });
    expect(s.partner.requests).toHaveLength(1);
    expect(clock.delays).toEqual([]);
  });

  it('without retry.enabled a 503 is tried once', async () => {
    answer(503, 200);
    const id = await createSteps(s.t, s.admin, [call()], {
      config: { retry: { maxAttempts: 5, enabled: false } },
    });
    const body = await run(s.t, s.user.token, id, s.configId, ORDER);
    expect(body.steps[0]).toMatchObject({ status: 'failed', attempts: 1 });
    expect(s.partner.requests).toHaveLength(1);
    expect(clock.delays).toEqual([]);
  });

  it('a step’s own retry overrides the workflow’s (and may switch retries off)', async () => {
    answer(503, 503, 503, 503, 503, 503);
    const id = await createSteps(
      s.t,
      s.admin,
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
    const body = await run(s.t, s.user.token, id, s.configId, ORDER);
    expect(body.steps.map((s: any) => [s.name, s.status, s.attempts])).toEqual([
      ['twice', 'failed', 2],
      ['once', 'failed', 1],
      ['inherits', 'failed', 3],
    ]);
    expect(s.partner.requests).toHaveLength(6);
    expect(clock.delays).toEqual([250, 500, 1000]);
  });

  it('maxDelayMs caps every wait', async () => {
    answer(503, 503, 503, 200);
    const id = await createSteps(s.t, s.admin, [call()], retrying({ maxAttempts: 4, maxDelayMs: 2500 }));
    const body = await run(s.t, s.user.token, id, s.configId, ORDER);
    expect(body.steps[0]).toMatchObject({ status: 'success', attempts: 4 });
    expect(s.partner.requests).toHaveLength(4);
    expect(clock.delays).toEqual([1000, 2500, 2500]);
  });

  it('429 with Retry-After: 3 waits 3000 ms, within maxDelayMs', async () => {
    answer([429, { 'retry-after': '3' }], 200);
    const id = await createSteps(s.t, s.admin, [call()], retrying({ maxAttempts: 2 }));
    const body = await run(s.t, s.user.token, id, s.configId, ORDER);
    expect(body.steps[0]).toMatchObject({ status: 'success', attempts: 2 });
    expect(s.partner.requests).toHaveLength(2);
    expect(clock.delays).toEqual([3000]);

    s.partner.reset();
    clock.delays.length = 0;
    answer([429, { 'retry-after': '3' }], 200);
    const capped = await createSteps(s.t, s.admin, [call()], retrying({ maxAttempts: 2, maxDelayMs: 2000 }));
    expect((await run(s.t, s.user.token, capped, s.configId, ORDER)).success).toBe(true);
    expect(clock.delays).toEqual([2000]);
  });

  it('a dropped connection (network error) is retried with the same backoff', async () => {
    const id = await createSteps(
      s.t,
      s.admin,
      [{ name: 'down', type: 'api', config: { url: s.partner.url('/hook') } }],
      retrying({ maxAttempts: 2, backoff: 'fixed' }),
    );
    // The server reads each request and drops the connection without answering.
    s.partner.handle((req) => req.socket.destroy());
    const body = await run(s.t, s.user.token, id, s.configId, ORDER);
    expect(body.steps[0]).toMatchObject({
      status: 'failed',
      attempts: 2,
      error: { code: 'NETWORK_ERROR' },
    });
    expect(s.partner.requests).toHaveLength(2);
    expect(clock.delays).toEqual([1000]);
  });

  it('a call that times out is retried (TIMEOUT); an answer over maxResponseBytes is not', async () => {
    // Never answers: the call's own timeout ends each attempt. A second long, so that a loaded
    // machine still gets each request to the server before its time is up (100 ms once did not).
    s.partner.handle(() => undefined);
    const slow = await createSteps(
      s.t,
      s.admin,
      [{ name: 'slow', type: 'api', config: { url: s.partner.url('/slow'), timeoutMs: 1000 } }],
      retrying({ maxAttempts: 2, backoff: 'fixed' }),
    );
    const timedOut = await run(s.t, s.user.token, slow, s.configId, ORDER);
    expect(timedOut.steps[0]).toMatchObject({ status: 'failed', attempts: 2, error: { code: 'TIMEOUT' } });
    expect(s.partner.requests).toHaveLength(2);
    expect(clock.delays).toEqual([1000]);

    s.partner.reset();
    clock.delays.length = 0;
    s.partner.handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('x'.repeat(1000));
    });
    const big = await createSteps(
      s.t,
      s.admin,
      [{ name: 'big', type: 'api', config: { url: s.partner.url('/big'), maxResponseBytes: 100 } }],
      retrying({ maxAttempts: 3 }),
    );
    const tooLarge = await run(s.t, s.user.token, big, s.configId, ORDER);
    expect(tooLarge.steps[0]).toMatchObject({
      status: 'failed',
      attempts: 1,
      error: { code: 'RESPONSE_TOO_LARGE', details: { maxResponseBytes: 100 } },
    });
    expect(s.partner.requests).toHaveLength(1);
    expect(clock.delays).toEqual([]);
  });
});
