import { randomBytes } from 'node:crypto';
import { startHttpServer, type HttpTestServer } from '../../utils/http-test-server';
import { useAppSuite } from '../../utils/app-suite';
import { useProcessEnv } from '../../utils/process-env';
import { createSteps, postWorkflow, run, workflowBody } from '../../utils/workflow-api';

/**
 * `{{env.X}}` values never leave the service through an `api` step (its
 * stored answer, a cut answer, an encoded echo, a redirect to another origin), and values rendered
 * into a URL cannot move the call. `partner` and `other` are two real servers on 127.0.0.1, both
 * allow-listed, so only our own rules stand between the secret and `other`.
 */
describe('workflow api step: env secrets stay in, URL templates cannot re-target the call', () => {
  let other: HttpTestServer;
  // 36 characters with a quote and a backslash: JSON escapes it, base64 has no padding.
  const secret = `${randomBytes(8).toString('hex')}"q\\z${randomBytes(8).toString('hex')}`;
  useProcessEnv({ API_TOKEN: secret, PARTNER_BASE: undefined });
  beforeAll(async () => {
    other = await startHttpServer();
  });
  afterAll(() => other.close());
  const s = useAppSuite({
    partner: true,
    env: ({ partner }) => {
      process.env.PARTNER_BASE = partner.url('');
      return {
        WORKFLOW_API_ALLOWED_HOSTS: `127.0.0.1:${partner.port},127.0.0.1:${other.port}`,
        WORKFLOW_ENV_ALLOWLIST: 'API_TOKEN,PARTNER_BASE',
        WORKFLOW_ENV_ORIGINS: `API_TOKEN=${partner.url('')},PARTNER_BASE=${partner.url('')}`,
      };
    },
    users: 1,
    forms: 1,
  });
  beforeEach(() => other.reset());

  /** A workflow of one api step, `call`, with `config`. */
  const createCall = (config: Record<string, unknown>) =>
    createSteps(s.t, s.admin, [{ name: 'call', type: 'api', config }]);

  /** The run as its caller got it and as it is stored, as text. */
  async function answerAndRecord(body: { runId: string }): Promise<string> {
    const record = await s.t.request({
      method: 'GET',
      url: `/api/workflow/runs/${body.runId}`,
      token: s.admin,
    });
    expect(record.statusCode).toBe(200);
    return JSON.stringify(body) + record.body;
  }

  describe('redaction of the partner answer (2a, 2b)', () => {
    it.each([1, 7, 20, 35])(
      'an error answer echoing the request, padded so the 2,048 cut falls %d characters into the secret, keeps no prefix of it',
      async (into) => {
        // The partner fails and echoes what it got: the padded body, then the secret header.
        s.partner.handle((req, res, body) => {
          res.writeHead(500, { 'content-type': 'text/plain' });
          res.end(`${body}${String(req.headers['x-api-key'])}`);
        });
        const id = await createCall({
          url: s.partner.url('/echo'),
          method: 'POST',
          headers: { 'X-Api-Key': '{{env.API_TOKEN}}' },
          payload: '{{input.pad}}',
        });
        const pad = 'p'.repeat(2048 - into);
        const body = await run(s.t, s.user.token, id, s.configId, { pad });
        expect(body.steps[0]).toMatchObject({ status: 'failed', error: { code: 'HTTP_STATUS' } });
        // Redacted first, then cut: a cut landing inside the marker goes before it.
        const redacted = `${pad}[redacted]`;
        const stored = redacted.length <= 2048 ? redacted : `${pad}…`;
        expect(body.steps[0].error.details).toEqual({ status: 500, data: stored });
        const text = await answerAndRecord(body);
        expect(text).not.toContain(secret.slice(0, 6));
        expect(text).not.toContain(`${pad}${secret.slice(0, into)}`);
        expect(s.partner.requests[0].headers['x-api-key']).toBe(secret);
      },
    );

    it('an over-long JSON error answer holding the secret (with " and \\) keeps neither it nor its escaped form', async () => {
      s.partner.handle((req, res) => {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ echo: { key: req.headers['x-api-key'] }, filler: 'x'.repeat(3000) }));
      });
      const id = await createCall({
        url: s.partner.url('/json'),
        headers: { 'X-Api-Key': '{{env.API_TOKEN}}' },
      });
      const body = await run(s.t, s.user.token, id, s.configId, {});
      const data = body.steps[0].error.details.data as string;
      expect(typeof data).toBe('string');
      expect(data.startsWith('{"echo":{"key":"[redacted]"},"filler":"xxx')).toBe(true);
      expect(data.endsWith('…')).toBe(true);
      const text = await answerAndRecord(body);
      const escaped = JSON.stringify(secret).slice(1, -1);
      expect(text).not.toContain(escaped);
      expect(text).not.toContain(JSON.stringify(escaped).slice(1, -1));
      expect(text).not.toContain(secret.slice(0, 6));
    });

    it('percent-encoded, base64 and JSON-escaped echoes in a successful answer are redacted', async () => {
      s.partner.handle((req, res) => {
        const key = String(req.headers['x-api-key']);
        const b64 = Buffer.from(key).toString('base64');
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            pct: encodeURIComponent(key),
            pctLower: encodeURIComponent(key).replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase()),
            query: new URLSearchParams({ k: key }).toString(),
            b64,
            b64url: Buffer.from(key).toString('base64url'),
            basic: `Basic ${Buffer.from(`user:${key}`).toString('base64')}`,
            escaped: JSON.stringify(key).slice(1, -1),
          }),
        );
      });
      const id = await createCall({
        url: s.partner.url('/encode'),
        headers: { 'X-Api-Key': '{{env.API_TOKEN}}' },
      });
      const body = await run(s.t, s.user.token, id, s.configId, {});
      expect(body.success).toBe(true);
      const { data } = body.results.call;
      expect(data).toMatchObject({
        pct: '[redacted]',
        pctLower: '[redacted]',
        query: 'k=[redacted]',
        b64: '[redacted]',
        b64url: '[redacted]',
        escaped: '[redacted]',
      });
      expect(data.basic).toMatch(/^Basic [A-Za-z0-9+/]{0,8}\[redacted\][A-Za-z0-9+/=]{0,4}$/);
      const text = await answerAndRecord(body);
      for (const form of [
        secret,
        encodeURIComponent(secret),
        Buffer.from(secret).toString('base64'),
        Buffer.from(secret).toString('base64url'),
        Buffer.from(`user:${secret}`).toString('base64'),
      ])
        expect(text).not.toContain(form);
    });
  });

  describe('redirects to another origin (2c)', () => {
    const step = (path: string, payload: unknown) => ({
      name: 'call',
      type: 'api',
      config: {
        url: s.partner.url(path),
        method: 'POST',
        headers: { 'X-Api-Key': '{{env.API_TOKEN}}', 'X-Trace': 'trace-1' },
        payload,
      },
    });
    /** Runs the one step `step(path, payload)` and returns what its caller gets. */
    const runStep = async (path: string, payload: unknown) =>
      run(s.t, s.user.token, await createSteps(s.t, s.admin, [step(path, payload)]), s.configId, {});
    /** `other` got one request, with `landed`'s method and body, the literal header and not the env one. */
    const expectLanded = (landed: { method: string; body: string }) => {
      expect(other.requests).toHaveLength(1);
      expect(other.requests[0]).toMatchObject({ url: '/landing', ...landed });
      expect(other.requests[0].headers['x-api-key']).toBeUndefined();
      expect(other.requests[0].headers['x-trace']).toBe('trace-1');
    };
    beforeEach(() => {
      s.partner.handle((req, res) => {
        const [, status, to] = /^\/(\d+)\/(same|other)$/.exec(req.url ?? '') ?? [];
        if (!status) {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{"at":"partner"}');
          return;
        }
        res.writeHead(Number(status), {
          location: to === 'same' ? s.partner.url('/final') : other.url('/landing'),
        });
        res.end();
      });
    });

    it('a 302 to another origin arrives without the env-rendered header (a literal header stays)', async () => {
      const body = await runStep('/302/other', { key: '{{env.API_TOKEN}}' });
      expect(body.success).toBe(true);
      expectLanded({ method: 'GET', body: '' });
      expect(JSON.stringify(other.requests)).not.toContain(secret.slice(0, 6));
    });

    it('a 307 to another origin that would re-send an env-rendered body is refused: nothing reaches it', async () => {
      const body = await runStep('/307/other', { key: '{{env.API_TOKEN}}' });
      expect(body.steps[0]).toMatchObject({
        status: 'failed',
        attempts: 1,
        error: { code: 'REDIRECT_REFUSED' },
      });
      expect(other.connections).toBe(0);
      expect(s.partner.requests).toHaveLength(1);
    });

    it('a 307 to another origin with a literal body keeps method and body but drops the env header', async () => {
      const body = await runStep('/307/other', { a: 1 });
      expect(body.success).toBe(true);
      expectLanded({ method: 'POST', body: '{"a":1}' });
    });

    it('a redirect within the origin keeps the env header and the body (control)', async () => {
      const body = await runStep('/307/same', { key: '{{env.API_TOKEN}}' });
      expect(body.success).toBe(true);
      expect(s.partner.requests.map((r) => r.url)).toEqual(['/307/same', '/final']);
      expect(s.partner.requests[1].headers['x-api-key']).toBe(secret);
      expect(JSON.parse(s.partner.requests[1].body)).toEqual({ key: secret });
      expect(other.connections).toBe(0);
    });
  });

  describe('values rendered into the URL (3)', () => {
    it('a value in a path segment or a query component stays inside it (percent-encoded)', async () => {
      const id = await createCall({
        url: `${s.partner.url('/customers')}/{{input.id}}?q={{input.q}}`,
        headers: { Authorization: 'Bearer {{env.API_TOKEN}}' },
      });
      const body = await run(s.t, s.user.token, id, s.configId, {
        id: '../admin/export?all=1#',
        q: 'a&all=1',
      });
      expect(body.success).toBe(true);
      expect(s.partner.requests.map((r) => r.url)).toEqual([
        '/customers/..%2Fadmin%2Fexport%3Fall%3D1%23?q=a%26all%3D1',
      ]);
    });

    it('an origin from env and a path from the input: the call goes to the env origin', async () => {
      const id = await createCall({ url: '{{env.PARTNER_BASE}}/customers/{{input.id}}' });
      const body = await run(s.t, s.user.token, id, s.configId, { id: '@127.0.0.1:1/x' });
      expect(body.success).toBe(true);
      expect(s.partner.requests.map((r) => r.url)).toEqual(['/customers/%40127.0.0.1%3A1%2Fx']);
    });

    it.each([
      ['the host followed by an input path', (p: number) => `http://127.0.0.1:${p}{{input.path}}`, 'url'],
      ['a url that is an input value', () => '{{input.target}}', 'url'],
      ['a host from the user', () => 'https://{{user.email}}.example/x', 'url'],
      ['a port from the saved record', () => 'http://127.0.0.1:{{savedData.port}}/x', 'url'],
      ['a base from a step result', () => '{{results.lookup.data.base}}/x', 'url'],
      ['userinfo from the input', () => 'https://{{input.who}}@crm.example/x', 'url'],
      ['an env scheme and an input host', () => '{{env.PARTNER_BASE}}://{{input.host}}/x', 'url'],
    ])('%s is a 422 at save naming the field', async (_, urlOf, field) => {
      const response = await postWorkflow(
        s.t,
        s.admin,
        workflowBody({
          config: { steps: [{ name: 'call', type: 'api', config: { url: urlOf(s.partner.port) } }] },
        }),
      );
      expect(response.statusCode).toBe(422);
      expect(response.json()).toMatchObject({ code: 'VALIDATION_FAILED', statusCode: 422 });
      expect(response.json().validationErrors).toEqual([
        { field: `config.steps[0].config.${field}`, rule: 'urlOrigin', message: expect.any(String) },
      ]);
    });

    it('a compensating url whose origin comes from the partner answer is a 422 too, on POST and on PUT', async () => {
      const bad = {
        name: 'call',
        type: 'api',
        config: { url: s.partner.url('/x'), compensate: { method: 'DELETE', url: '{{result.data.self}}' } },
      };
      const created = await postWorkflow(s.t, s.admin, workflowBody({ config: { steps: [bad] } }));
      expect(created.statusCode).toBe(422);
      expect(created.json().validationErrors).toEqual([
        { field: 'config.steps[0].config.compensate.url', rule: 'urlOrigin', message: expect.any(String) },
      ]);
      const id = await createSteps(s.t, s.admin, [{ ...bad, config: { url: s.partner.url('/x') } }]);
      const updated = await s.t.request({
        method: 'PUT',
        url: `/api/workflow/${id}`,
        token: s.admin,
        payload: workflowBody({ config: { steps: [{ ...bad, config: { url: '{{input.target}}' } }] } }),
      });
      expect(updated.statusCode).toBe(422);
      expect(updated.json().validationErrors).toEqual([
        { field: 'config.steps[0].config.url', rule: 'urlOrigin', message: expect.any(String) },
      ]);
    });

    it('origins from literal text or env are accepted (an env value still goes only where it is bound)', async () => {
      const save = (url: string) =>
        postWorkflow(
          s.t,
          s.admin,
          workflowBody({ config: { steps: [{ name: 'call', type: 'api', config: { url } }] } }),
        );
      for (const url of [
        'https://crm.example/customers/{{input.id}}?q={{input.q}}#{{input.f}}',
        '{{env.PARTNER_BASE}}/customers/{{input.id}}',
      ])
        expect((await save(url)).statusCode).toBe(201);
      // The origin rule lets env make a host; WORKFLOW_ENV_ORIGINS does not let API_TOKEN go there.
      const hostFromSecret = await save('https://{{env.API_TOKEN}}.example:8443/x');
      expect(hostFromSecret.statusCode).toBe(422);
      expect(hostFromSecret.json().validationErrors).toEqual([
        { field: 'config.steps[0].config.url', rule: 'secretOrigin', message: expect.any(String) },
      ]);
    });
  });
});
