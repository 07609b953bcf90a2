import { useAppSuite, WORKFLOW_SUITE } from '../../utils/app-suite';
import { startHttpServer, type HttpTestServer } from '../../utils/http-test-server';
import { createSteps, postWorkflow, run, workflowBody } from '../../utils/workflow-api';

/**
 * Only 127.0.0.0/8 is ever contacted. `allowed` (127.0.0.1:P, the suite's partner) is the one
 * allow-listed destination; `sameHost` listens on 127.0.0.1 on another port and `sibling` on
 * 127.0.0.2 on port P, so a guard that let a request through would be caught by a real server
 * counting connections.
 */
describe('SSRF through a workflow api step: refused destinations are never contacted', () => {
  const s = useAppSuite(WORKFLOW_SUITE);
  let allowed: HttpTestServer;
  let sameHost: HttpTestServer;
  let sibling: HttpTestServer;
  beforeAll(async () => {
    allowed = s.partner;
    sameHost = await startHttpServer('127.0.0.1');
    sibling = await startHttpServer('127.0.0.2', allowed.port);
  });
  afterAll(() => Promise.all([sameHost.close(), sibling.close()]));
  beforeEach(() => {
    sameHost.reset();
    sibling.reset();
  });

  const connections = () => [allowed.connections, sameHost.connections, sibling.connections];

  /** One api step to `url`, with retries on (a refusal must not be retried). */
  async function callOnce(url: string, method = 'POST') {
    const id = await createSteps(
      s.t,
      s.admin,
      [{ name: 'call', type: 'api', config: { url, method, payload: { a: 1 } } }],
      {
        config: { retry: { enabled: true, maxAttempts: 3, delayMs: 0 } },
      },
    );
    return run(s.t, s.user.token, id, s.configId, { name: 'Ann', qty: 1 });
  }

  it('the allow-listed destination is reachable (control)', async () => {
    const body = await callOnce(allowed.url('/ok'));
    expect(body).toMatchObject({ success: true, results: { call: { status: 200, data: { ok: true } } } });
    expect(allowed.requests).toHaveLength(1);
    expect(connections()).toEqual([1, 0, 0]);
  });

  it.each<[string, (port: number, other: number) => string, RegExp]>([
    ['another loopback address', (p) => `http://127.0.0.2:${p}/`, /^loopback$/],
    ['a decimal spelling of 127.0.0.2', (p) => `http://2130706434:${p}/`, /^loopback$/],
    ['an octal spelling of 127.0.0.2', (p) => `http://017700000002:${p}/`, /^loopback$/],
    ['a hex spelling of 127.0.0.2', (p) => `http://0x7f000002:${p}/`, /^loopback$/],
    [
      'the IPv4-mapped IPv6 form of the allow-listed address',
      (p) => `http://[::ffff:127.0.0.1]:${p}/`,
      /loopback/,
    ],
    ['a name resolving to loopback', (p) => `http://localhost:${p}/`, /loopback/],
    ['the allow-listed host on another port', (_, other) => `http://127.0.0.1:${other}/`, /^loopback$/],
  ])('%s is refused with DESTINATION_REFUSED and nothing is sent', async (_, urlOf, reason) => {
    const body = await callOnce(urlOf(allowed.port, sameHost.port));
    expect(body).toMatchObject({
      success: false,
      status: 'failed',
      steps: [{ name: 'call', status: 'failed', attempts: 1, error: { code: 'DESTINATION_REFUSED' } }],
    });
    expect(body.steps[0].error.details.reason).toMatch(reason);
    expect(connections()).toEqual([0, 0, 0]);
  });

  it('a redirect from the allow-listed server to a non-allow-listed loopback address is refused', async () => {
    allowed.handle((req, res) => {
      const target =
        req.url === '/to-port' ? sameHost.url('/secret') : `http://127.0.0.2:${allowed.port}/secret`;
      res.writeHead(req.url === '/to-port' ? 302 : 307, { location: target });
      res.end();
    });
    for (const path of ['/to-port', '/to-sibling']) {
      const body = await callOnce(allowed.url(path));
      expect(body.steps[0]).toMatchObject({
        status: 'failed',
        attempts: 1,
        error: { code: 'DESTINATION_REFUSED' },
      });
    }
    expect(allowed.requests.map((r) => r.url)).toEqual(['/to-port', '/to-sibling']);
    expect(sameHost.connections).toBe(0);
    expect(sibling.connections).toBe(0);
  });

  it('a redirect within the allow-listed destination is followed (control)', async () => {
    allowed.handle((req, res) => {
      if (req.url === '/start') {
        res.writeHead(303, { location: '/final' });
        res.end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ at: req.url, method: req.method }));
    });
    const body = await callOnce(allowed.url('/start'));
    expect(body).toMatchObject({
      success: true,
      results: { call: { status: 200, data: { at: '/final', method: 'GET' } } },
    });
    expect(allowed.requests.map((r) => `${r.method} ${r.url}`)).toEqual(['POST /start', 'GET /final']);
    expect(connections()).toEqual([2, 0, 0]);
  });

  it('a url whose origin comes from the input is refused when saved; an input in the path stays there', async () => {
    const refused = await postWorkflow(
      s.t,
      s.admin,
      workflowBody({
        config: { steps: [{ name: 'call', type: 'api', config: { url: '{{input.target}}' } }] },
      }),
    );
    expect(refused.statusCode).toBe(422);
    expect(refused.json().validationErrors).toEqual([
      { field: 'config.steps[0].config.url', rule: 'urlOrigin', message: expect.any(String) },
    ]);
    const id = await createSteps(s.t, s.admin, [
      { name: 'call', type: 'api', config: { url: `${allowed.url('/')}{{input.target}}` } },
    ]);
    const moved = await run(s.t, s.user.token, id, s.configId, { target: `@127.0.0.2:${allowed.port}/` });
    expect(moved.success).toBe(true);
    expect(allowed.requests.map((r) => r.url)).toEqual([`/%40127.0.0.2%3A${allowed.port}%2F`]);
    expect([sameHost.connections, sibling.connections]).toEqual([0, 0]);
  });
});
