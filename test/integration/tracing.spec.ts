import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { OtlpReceiver } from '../utils/otlp-receiver';

const root = resolve(__dirname, '../..');

/** Starts the real service (src/main.ts) exporting traces to `endpoint`; resolves with its base URL. */
async function startService(
  env: Record<string, string>,
): Promise<{ child: ChildProcess; url: string; output: () => string }> {
  const child = spawn(process.execPath, ['-r', '@swc-node/register', 'src/main.ts'], {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      DATA_DIR: mkdtempSync(join(tmpdir(), 'fdws-tracing-')),
      JWT_SECRET: 'tracing-secret-0123456789abcdef',
      OTEL_BSP_SCHEDULE_DELAY: '100',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const deadline = Date.now() + 90_000;
  for (;;) {
    const match = /Listening on (http:\/\/[\d.]+:\d+)/.exec(output);
    if (match) return { child, url: match[1], output: () => output };
    if (child.exitCode !== null || Date.now() > deadline)
      throw new Error(`service did not start:\n${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
}

describe('tracing (OTLP/HTTP to a real receiver)', () => {
  const receiver = new OtlpReceiver();
  let service: Awaited<ReturnType<typeof startService>>;

  beforeAll(async () => {
    await receiver.start();
    service = await startService({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_SERVICE_NAME: 'fdws-under-test',
    });
  }, 120_000);
  afterAll(async () => {
    await stop(service.child);
    await receiver.stop();
  });

  it('exports the HTTP server span of a request with its x-request-id, and skips health probes', async () => {
    const login = await fetch(`${service.url}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': 'trace-me-123' },
      body: JSON.stringify({ email: 'admin@example.com', password: 'admin12345' }),
    });
    expect(login.status).toBe(200);
    expect((await fetch(`${service.url}/health`)).status).toBe(200);
    // The batch exporter may send the request's inner spans before its server span (which ends
    // last): wait for both.
    await receiver.waitFor(
      (spans) =>
        spans.some((span) => span.attributes['http.request.header.x_request_id'] === 'trace-me-123') &&
        spans.some(
          (span) => span.scope === '@opentelemetry/instrumentation-http' && span.name === 'POST /auth/login',
        ),
    );
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
    const service = await startService({});
    try {
      const response = await fetch(`${service.url}/health`);
      expect(response.status).toBe(200);
      expect(service.output()).not.toContain('Tracing on');
    } finally {
      await stop(service.child);
    }
  }, 120_000);
});
