import { ORDER_FORM } from '../factories/config.factory';
import { startHttpServer, type HttpTestServer } from '../utils/http-test-server';
import { OtlpReceiver, type ReceivedSpan } from '../utils/otlp-receiver';
import { workflowBody } from '../utils/workflow-api';
import {
  processStore,
  startServiceProcess,
  type ProcessStore,
  type ServiceProcess,
} from '../utils/service-process';

/** The real service on `store` exporting traces as `env` says; the test admin is the seeded admin. */
function startService(store: ProcessStore, env: Record<string, string>): Promise<ServiceProcess> {
  return startServiceProcess({ ...store.env, OTEL_BSP_SCHEDULE_DELAY: '100', ...env });
}

describe('tracing (OTLP/HTTP to a real receiver)', () => {
  const receiver = new OtlpReceiver();
  let service: ServiceProcess;
  let store: ProcessStore;
  let hook: HttpTestServer;

  beforeAll(async () => {
    await receiver.start();
    hook = await startHttpServer();
    store = await processStore('fdws-tracing-');
    service = await startService(store, {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_SERVICE_NAME: 'fdws-under-test',
      WORKFLOW_API_ALLOWED_HOSTS: `127.0.0.1:${hook.port}`,
      WORKFLOW_POLL_MS: '100',
    });
  }, 120_000);
  afterAll(async () => {
    await service.stop();
    await store.close();
    await receiver.stop();
    await hook.close();
  });

  /** A JSON request to the service as the admin; the answer's status and body. */
  async function call(
    method: string,
    path: string,
    body: unknown,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; body: any }> {
    const token = await adminToken();
    const response = await fetch(`${service.url}${path}`, {
      method,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, ...headers },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: await response.json() };
  }

  let token: string | undefined;
  async function adminToken(): Promise<string> {
    if (token) return token;
    const login = await fetch(`${service.url}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'admin@example.com', password: 'admin12345' }),
    });
    token = ((await login.json()) as { token: string }).token;
    return token;
  }

  /** A form and a workflow (transform, then an api call to the hook retried once) the admin runs. */
  async function workflowWithTwoSteps(): Promise<{ configId: string; workflowId: string }> {
    const config = await call('POST', '/api/configs', ORDER_FORM);
    expect(config.status).toBe(201);
    const workflow = await call(
      'POST',
      '/api/workflow',
      workflowBody({
        config: {
          steps: [
            { name: 'shape', type: 'transform', config: { mapping: { who: 'name' } } },
            { name: 'call', type: 'api', config: { url: hook.url('/hook'), method: 'POST' } },
          ],
          retry: { enabled: true, maxAttempts: 2, backoff: 'fixed', delayMs: 10 },
        },
      }),
    );
    expect(workflow.status).toBe(201);
    return { configId: config.body.id, workflowId: workflow.body.id };
  }

  const named = (spans: ReceivedSpan[], name: string) => spans.filter((span) => span.name === name);

  it('a run inside its request is one trace: run span under the request span, a span per step and per attempt, with the ids', async () => {
    const { configId, workflowId } = await workflowWithTwoSteps();
    let calls = 0;
    hook.handle((_req, res) => {
      res.writeHead(++calls === 1 ? 503 : 200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
    const executed = await call(
      'POST',
      `/api/workflow/${workflowId}/execute`,
      { configId, data: { name: 'Ann', qty: 1 } },
      { 'x-request-id': 'run-req-1' },
    );
    expect(executed.status).toBe(200);
    expect(executed.body).toMatchObject({ status: 'success', steps: [{ attempts: 1 }, { attempts: 2 }] });
    const runId: string = executed.body.runId;
    const ofRun = (spans: ReceivedSpan[]) =>
      spans.filter((span) => span.attributes['fdws.workflow.run_id'] === runId);
    await receiver.waitFor(
      (spans) =>
        named(ofRun(spans), 'workflow.run').length === 1 &&
        spans.some((span) => span.name === 'POST /api/workflow/:workflowId/execute' && !span.parentSpanId),
    );
    const spans = ofRun(receiver.spans);
    const [runSpan] = named(spans, 'workflow.run');
    expect(runSpan.attributes).toMatchObject({
      'fdws.workflow.id': workflowId,
      'fdws.workflow.status': 'success',
      'fdws.workflow.mode': 'sync',
      'http.request.header.x_request_id': 'run-req-1',
    });
    // One trace: the run is a child of the request's spans, whose root is the HTTP server span.
    const trace = receiver.spans.filter((span) => span.traceId === runSpan.traceId);
    expect(spans.every((span) => span.traceId === runSpan.traceId)).toBe(true);
    const root = trace.find((span) => !span.parentSpanId)!;
    expect(root).toMatchObject({ scope: '@opentelemetry/instrumentation-http' });
    expect(runSpan.parentSpanId).toBeDefined();
    const steps = named(spans, 'workflow.step');
    expect(steps.map((span) => span.attributes['fdws.workflow.step']).sort()).toEqual(['call', 'shape']);
    for (const step of steps) {
      expect(step.parentSpanId).toBe(runSpan.spanId);
      expect(step.attributes).toMatchObject({
        'fdws.workflow.id': workflowId,
        'fdws.workflow.status': 'success',
        'http.request.header.x_request_id': 'run-req-1',
      });
    }
    const callStep = steps.find((span) => span.attributes['fdws.workflow.step'] === 'call')!;
    const attempts = named(spans, 'workflow.attempt').filter((span) => span.parentSpanId === callStep.spanId);
    expect(attempts.map((span) => span.attributes['fdws.workflow.attempt']).sort()).toEqual([1, 2]);
    const first = attempts.find((span) => span.attributes['fdws.workflow.attempt'] === 1)!;
    expect(first.attributes).toMatchObject({
      'fdws.workflow.step': 'call',
      'fdws.workflow.error_code': 'HTTP_STATUS',
    });
    // What the attempt did (its outgoing HTTP call) nests in the attempt's span.
    expect(trace.some((span) => span.parentSpanId === first.spanId)).toBe(true);
  }, 60_000);

  it('a queued run (Prefer: respond-async) is its own trace, linked to the request that queued it', async () => {
    const { configId, workflowId } = await workflowWithTwoSteps();
    hook.handle((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
    const queued = await call(
      'POST',
      `/api/workflow/${workflowId}/execute`,
      { configId, data: { name: 'Bo', qty: 1 } },
      { 'x-request-id': 'queue-req-1', prefer: 'respond-async' },
    );
    expect(queued.status).toBe(202);
    const runId: string = queued.body.runId;
    await receiver.waitFor(
      (spans) =>
        spans.some(
          (span) => span.name === 'workflow.run' && span.attributes['fdws.workflow.run_id'] === runId,
        ) &&
        spans.some(
          (span) =>
            span.name === 'POST /api/workflow/:workflowId/execute' &&
            !span.parentSpanId &&
            spans.some(
              (tagged) =>
                tagged.traceId === span.traceId &&
                tagged.attributes['http.request.header.x_request_id'] === 'queue-req-1',
            ),
        ),
    );
    const runSpan = receiver.spans.find(
      (span) => span.name === 'workflow.run' && span.attributes['fdws.workflow.run_id'] === runId,
    )!;
    const tagged = receiver.spans.find(
      (span) =>
        span.attributes['http.request.header.x_request_id'] === 'queue-req-1' && span.name !== 'workflow.run',
    )!;
    const request = receiver.spans.find((span) => span.traceId === tagged.traceId && !span.parentSpanId)!;
    expect(request.name).toBe('POST /api/workflow/:workflowId/execute');
    expect(runSpan.parentSpanId).toBeUndefined();
    expect(runSpan.traceId).not.toBe(request.traceId);
    expect(runSpan.links).toEqual([{ traceId: request.traceId, spanId: expect.any(String) }]);
    expect(receiver.spans.some((span) => span.spanId === runSpan.links[0].spanId)).toBe(true);
    expect(runSpan.attributes).toMatchObject({
      'fdws.workflow.id': workflowId,
      'fdws.workflow.mode': 'async',
      'fdws.workflow.status': 'success',
      'http.request.header.x_request_id': 'queue-req-1',
    });
    const steps = receiver.spans.filter(
      (span) => span.name === 'workflow.step' && span.traceId === runSpan.traceId,
    );
    expect(steps).toHaveLength(2);
  }, 60_000);

  it('exports the HTTP server span of a request with its x-request-id, and skips health probes', async () => {
    const login = await fetch(`${service.url}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': 'trace-me-123' },
      body: JSON.stringify({ email: 'admin@example.com', password: 'admin12345' }),
    });
    expect(login.status).toBe(200);
    expect((await fetch(`${service.url}/health`)).status).toBe(200);
    // The batch exporter may send the request's inner spans before its server span (which ends
    // last): wait for both, in one trace. (Any server span named POST /auth/login would not do: the
    // earlier tests' logins have them, and on a loaded machine they arrive first.)
    await receiver.waitFor((spans) => {
      const tagged = spans.find(
        (span) => span.attributes['http.request.header.x_request_id'] === 'trace-me-123',
      );
      return spans.some(
        (span) =>
          span.traceId === tagged?.traceId &&
          span.scope === '@opentelemetry/instrumentation-http' &&
          !span.parentSpanId,
      );
    });
    const tagged = receiver.spans.find(
      (span) => span.attributes['http.request.header.x_request_id'] === 'trace-me-123',
    )!;
    const trace = receiver.spans.filter((span) => span.traceId === tagged.traceId);
    const server = trace.find(
      (span) => span.scope === '@opentelemetry/instrumentation-http' && !span.parentSpanId,
    );
    expect(server).toMatchObject({ name: 'POST /auth/login' });
    expect(receiver.spans.some((span) => span.name.includes('/health'))).toBe(false);
  }, 60_000);
});

describe('tracing off (no OTLP endpoint)', () => {
  it('starts no tracing and serves as usual', async () => {
    const store = await processStore('fdws-tracing-off-');
    const service = await startService(store, {});
    try {
      const response = await fetch(`${service.url}/health`);
      expect(response.status).toBe(200);
      expect(service.output()).not.toContain('Tracing on');
    } finally {
      await service.stop();
      await store.close();
    }
  }, 120_000);
});
