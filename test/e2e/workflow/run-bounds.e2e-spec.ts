import { useAppSuite, WORKFLOW_SUITE } from '../../utils/app-suite';
import { createSteps, execute, executeAsync, getRun, run, waitForRun } from '../../utils/workflow-api';

const ORDER = { name: 'Ann', qty: 2 };

/**
 * A hostile partner answer fails its step, never the run; a run's `config.timeoutMs` bounds every
 * attempt and retry wait, not only the start of each step.
 */
describe('workflow runs: hostile partner answers and the run deadline', () => {
  const s = useAppSuite(WORKFLOW_SUITE);

  const answerJson = (body: string, status = 200) =>
    s.partner.handle((_req, res) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(body);
    });
  const callThenSave = (extra: Record<string, unknown> = {}) =>
    createSteps(
      s.t,
      s.admin,
      [
        { name: 'call', type: 'api', config: { url: s.partner.url('/hook') } },
        { name: 'store', type: 'save' },
      ],
      extra,
    );

  /** A call answered 503 and retried after 3 s, in a run whose config.timeoutMs is 1000. */
  const retriedPastDeadline = () => {
    answerJson('{}', 503);
    return callThenSave({
      config: { timeoutMs: 1000, retry: { enabled: true, maxAttempts: 5, backoff: 'fixed', delayMs: 3000 } },
    });
  };

  const DEEP = '['.repeat(100_000) + ']'.repeat(100_000);
  const NUL = JSON.stringify({ note: 'a\u0000b' });
  const NUL_KEY = '{"a\\u0000b": 1}';

  it.each([
    ['nested 100,000 levels', DEEP],
    ['with \\u0000 in a string', NUL],
    ['with \\u0000 in a key', NUL_KEY],
  ])(
    'an answer %s fails the api step (RESULT_NOT_STORABLE), the run answers 200 and is stored failed',
    async (_what, body) => {
      answerJson(body);
      const workflowId = await callThenSave();
      const response = await execute(s.t, s.user.token, workflowId, s.configId, ORDER);
      expect(response.statusCode).toBe(200);
      const result = response.json();
      expect(result).toMatchObject({
        success: false,
        status: 'failed',
        data: null,
        steps: [{ name: 'call', status: 'failed', error: { code: 'RESULT_NOT_STORABLE' } }],
      });
      expect(result.steps).toHaveLength(1);
      expect(await getRun(s.t, s.admin, result.runId)).toMatchObject({
        status: 'failed',
        steps: [{ error: { code: 'RESULT_NOT_STORABLE' } }],
      });
    },
  );

  it('a queued run getting a deep answer ends failed promptly, not after its lease', async () => {
    answerJson(DEEP);
    const workflowId = await callThenSave();
    const started = Date.now();
    const queued = await executeAsync(s.t, s.user.token, workflowId, s.configId, ORDER);
    expect(queued.statusCode).toBe(202);
    const done = await waitForRun(s.t, s.admin, queued.json().runId);
    expect(done).toMatchObject({ status: 'failed', steps: [{ error: { code: 'RESULT_NOT_STORABLE' } }] });
    // Well under the lease a stuck run would wait for; wide enough for a loaded CI machine.
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('a failing answer with \\u0000 keeps its code; what cannot be stored is left out', async () => {
    answerJson(NUL, 400);
    const workflowId = await callThenSave();
    const result = await run(s.t, s.user.token, workflowId, s.configId, ORDER);
    expect(result).toMatchObject({
      status: 'failed',
      steps: [{ status: 'failed', error: { code: 'HTTP_STATUS' } }],
    });
  });

  it('config.timeoutMs 1000 ends a call to a partner that never answers after about 1 s (WORKFLOW_TIMEOUT)', async () => {
    s.partner.handle(() => undefined);
    const workflowId = await callThenSave({ config: { timeoutMs: 1000 } });
    const started = Date.now();
    const result = await run(s.t, s.user.token, workflowId, s.configId, ORDER);
    const took = Date.now() - started;
    expect(result).toMatchObject({
      success: false,
      status: 'failed',
      steps: [{ name: 'call', status: 'failed', error: { code: 'WORKFLOW_TIMEOUT' } }],
    });
    expect(result.steps).toHaveLength(1);
    expect(took).toBeGreaterThanOrEqual(900);
    // Far from WORKFLOW_API_TIMEOUT_MS (10 s), the bound a missing cut would hit.
    expect(took).toBeLessThan(5000);
  });

  it('config.timeoutMs 1000 is not held by retry waits: the run ends when the next wait would pass it', async () => {
    const workflowId = await retriedPastDeadline();
    const started = Date.now();
    const result = await run(s.t, s.user.token, workflowId, s.configId, ORDER);
    // Under the 3 s retry wait a run held by it would take.
    expect(Date.now() - started).toBeLessThan(2900);
    expect(result).toMatchObject({
      status: 'failed',
      steps: [{ name: 'call', status: 'failed', error: { code: 'WORKFLOW_TIMEOUT' }, attempts: 1 }],
    });
    expect(s.partner.requests).toHaveLength(1);
  });

  it('a queued run under config.timeoutMs does not wait in the queue past its deadline', async () => {
    const workflowId = await retriedPastDeadline();
    const started = Date.now();
    const queued = await executeAsync(s.t, s.user.token, workflowId, s.configId, ORDER);
    const done = await waitForRun(s.t, s.admin, queued.json().runId);
    // Under the 3 s retry wait a run held in the queue by it would take.
    expect(Date.now() - started).toBeLessThan(2900);
    expect(done).toMatchObject({ status: 'failed', steps: [{ error: { code: 'WORKFLOW_TIMEOUT' } }] });
  });
});
