import { createConfig } from '../../factories/config.factory';
import { answerAfter } from '../../utils/http-test-server';
import { useAppSuite } from '../../utils/app-suite';
import { createSteps, executeAsync, run } from '../../utils/workflow-api';

describe('workflow limits: step timeout, run timeout, concurrency, step count', () => {
  const s = useAppSuite({ env: { WORKFLOW_POLL_MS: '50' }, partner: true });

  it("a step's timeoutMs ends a slow attempt with TIMEOUT", async () => {
    const configId = await createConfig(s.t, s.admin);
    s.partner.handle(answerAfter(2000));
    const workflowId = await createSteps(s.t, s.admin, [
      { name: 'slow', type: 'api', timeoutMs: 200, config: { url: s.partner.url('/slow') } },
    ]);
    const result = await run(s.t, s.admin, workflowId, configId, {});
    expect(result).toMatchObject({
      success: false,
      status: 'failed',
      steps: [{ name: 'slow', status: 'failed', error: { code: 'TIMEOUT' } }],
    });
  });

  it("the run's timeoutMs cuts the step in flight at the deadline; the next step never starts", async () => {
    const configId = await createConfig(s.t, s.admin);
    // The answer comes long after the deadline, so a cut at the deadline shows with room to spare on
    // a loaded machine: timing the run against an answer due 200 ms after the deadline once failed.
    s.partner.handle(answerAfter(4000));
    const workflowId = await createSteps(
      s.t,
      s.admin,
      [
        { name: 'slow', type: 'api', config: { url: s.partner.url('/slow') } },
        { name: 'after', type: 'transform', config: { mapping: { a: 'name' } } },
      ],
      { config: { timeoutMs: 1000 } },
    );
    const started = Date.now();
    const result = await run(s.t, s.admin, workflowId, configId, { name: 'x' });
    const elapsedMs = Date.now() - started;
    expect(elapsedMs).toBeGreaterThanOrEqual(1000);
    // Before the answer due at 4 s, with room for a loaded CI machine.
    expect(elapsedMs).toBeLessThan(3800);
    expect(result).toMatchObject({
      success: false,
      steps: [{ name: 'slow', status: 'failed', error: { code: 'WORKFLOW_TIMEOUT' } }],
    });
    expect(result.steps).toHaveLength(1);
  });

  it('config.concurrency 1: queued runs of one workflow run one at a time', async () => {
    const configId = await createConfig(s.t, s.admin);
    let active = 0;
    let peak = 0;
    s.partner.handle((_req, res) => {
      active += 1;
      peak = Math.max(peak, active);
      setTimeout(() => {
        active -= 1;
        res.end('{}');
      }, 150);
    });
    const workflowId = await createSteps(
      s.t,
      s.admin,
      [{ name: 'call', type: 'api', config: { url: s.partner.url('/one') } }],
      {
        config: { concurrency: 1 },
      },
    );
    const runIds: string[] = [];
    for (let i = 0; i < 4; i++)
      runIds.push((await executeAsync(s.t, s.admin, workflowId, configId, {})).json().runId);
    const deadline = Date.now() + 15_000;
    while (s.partner.requests.length < 4 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(s.partner.requests).toHaveLength(4);
    expect(peak).toBe(1);
  });

  it('more than 50 steps is a 422', async () => {
    const steps = Array.from({ length: 51 }, (_, i) => ({
      name: `s${i}`,
      type: 'transform',
      config: { mapping: { a: 'b' } },
    }));
    const response = await s.t.request({
      method: 'POST',
      url: '/api/workflow',
      token: s.admin,
      payload: { name: 'Long', type: 'custom', config: { steps } },
    });
    expect(response.statusCode).toBe(422);
    expect(response.json().validationErrors[0]).toMatchObject({
      field: 'config.steps',
      rule: 'arrayMaxSize',
    });
  });
});
