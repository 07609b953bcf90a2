import { DiscoveryModule, DiscoveryService } from '@nestjs/core';
import { Test, type TestingModule } from '@nestjs/testing';
import { startHttpServer, type HttpTestServer } from '../../../../test/utils/http-test-server';
import { loadConfig } from '../../../config/app-config';
import { AppConfigModule } from '../../../config/config.module';
import {
  createStepTestContext,
  type StepContext,
  StepError,
  WORKFLOW_STEP,
  type WorkflowStepOptions,
} from '../../sdk';
import { ApiStep } from './api-step';
import { ApiStepConfig } from './api-step.config';
import { ApiStepModule } from './api-step.module';

/** The engine's own StepContext (the step test kit) with `input.id` = 5. */
function stepContext(signal = new AbortController().signal): StepContext {
  return createStepTestContext({
    input: { id: 5 },
    workflow: { id: 'wf-1', name: 'wf' },
    step: { name: 'call', type: 'api', index: 0 },
    signal,
  });
}

function apiConfig(values: Partial<ApiStepConfig> & { url: string }): ApiStepConfig {
  return Object.assign(new ApiStepConfig(), values);
}

async function stepFailure(promise: Promise<unknown>): Promise<StepError> {
  const error = await promise.then(
    () => {
      throw new Error('expected the step to fail');
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(StepError);
  return error as StepError;
}

describe('ApiStep (real server on 127.0.0.1)', () => {
  let server: HttpTestServer;
  let moduleRef: TestingModule;
  let step: ApiStep;

  beforeAll(async () => {
    server = await startHttpServer();
    const config = loadConfig({ NODE_ENV: 'test', WORKFLOW_API_ALLOWED_HOSTS: `127.0.0.1:${server.port}` });
    moduleRef = await Test.createTestingModule({
      imports: [AppConfigModule.forRoot(config), DiscoveryModule, ApiStepModule],
    }).compile();
    step = moduleRef.get(ApiStep);
  });

  afterAll(async () => {
    await moduleRef.close();
    await server.close();
  });

  beforeEach(() => server.reset());

  it('is found by the DiscoveryService as the `api` step type', () => {
    const found = moduleRef
      .get(DiscoveryService)
      .getProviders()
      .filter((wrapper) => wrapper.metatype && Reflect.getMetadata(WORKFLOW_STEP, wrapper.metatype));
    expect(found.map((wrapper) => wrapper.instance)).toEqual([step]);
    const options = Reflect.getMetadata(WORKFLOW_STEP, ApiStep) as WorkflowStepOptions;
    expect(options).toMatchObject({
      type: 'api',
      config: ApiStepConfig,
      replayable: false,
      rawFields: ['url', 'compensate'],
    });
  });

  describe('execute', () => {
    it('GETs by default and gives {status, data}', async () => {
      server.handle((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"city":"Szeged"}');
      });
      const outcome = await step.execute(stepContext(), apiConfig({ url: server.url('/lookup') }));
      expect(outcome).toEqual({ result: { status: 200, data: { city: 'Szeged' } } });
      expect(server.requests[0]).toMatchObject({ method: 'GET', url: '/lookup', body: '' });
    });

    it('refuses a url whose origin a rendered value would move (saved before the rule), sending nothing', async () => {
      const error = await stepFailure(
        step.execute(stepContext(), apiConfig({ url: `http://127.0.0.1:${server.port}{{input.id}}/x` })),
      );
      expect(error).toMatchObject({ code: 'INVALID_URL', retryable: false, details: { reason: 'origin' } });
      expect(server.connections).toBe(0);
    });

    it('gives a text body as text', async () => {
      server.handle((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('pong');
      });
      const outcome = await step.execute(stepContext(), apiConfig({ url: server.url() }));
      expect(outcome.result).toEqual({ status: 200, data: 'pong' });
    });

    it('POSTs an object payload as JSON', async () => {
      const outcome = await step.execute(
        stepContext(),
        apiConfig({
          url: server.url('/hook'),
          method: 'POST',
          headers: { 'X-Token': 'abc' },
          payload: { name: 'Ada', tags: ['a'], n: 1 },
        }),
      );
      expect(outcome.result).toEqual({ status: 200, data: { ok: true } });
      const [request] = server.requests;
      expect(request.method).toBe('POST');
      expect(request.headers['content-type']).toBe('application/json');
      expect(request.headers['x-token']).toBe('abc');
      expect(JSON.parse(request.body)).toEqual({ name: 'Ada', tags: ['a'], n: 1 });
    });

    it.each([
      ['{"a":1}', undefined, 'application/json'],
      ['a=1&b=2', undefined, 'text/plain; charset=utf-8'],
      ['a=1&b=2', 'application/x-www-form-urlencoded', 'application/x-www-form-urlencoded'],
      ['{"a":1}', 'application/vnd.api+json', 'application/vnd.api+json'],
    ])('sends the string payload %s as is (content type %s -> %s)', async (payload, given, sent) => {
      const headers = given ? { 'Content-Type': given } : undefined;
      await step.execute(stepContext(), apiConfig({ url: server.url(), method: 'PUT', payload, headers }));
      expect(server.requests[0]).toMatchObject({ method: 'PUT', body: payload });
      expect(server.requests[0].headers['content-type']).toBe(sent);
    });

    it.each([
      [503, true],
      [500, true],
      [502, true],
      [408, true],
      [400, false],
      [401, false],
      [404, false],
      [422, false],
    ])('fails with HTTP_STATUS on %d (retryable: %s)', async (status, retryable) => {
      server.handle((_req, res) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end('{"error":"nope"}');
      });
      const error = await stepFailure(step.execute(stepContext(), apiConfig({ url: server.url() })));
      expect(error).toMatchObject({
        code: 'HTTP_STATUS',
        retryable,
        details: { status, data: { error: 'nope' } },
      });
      expect(error.retryAfterMs).toBeUndefined();
    });

    it('fails a redirect it could not follow (3xx without location)', async () => {
      server.handle((_req, res) => {
        res.writeHead(304);
        res.end();
      });
      const error = await stepFailure(step.execute(stepContext(), apiConfig({ url: server.url() })));
      expect(error).toMatchObject({ code: 'HTTP_STATUS', retryable: false, details: { status: 304 } });
    });

    it('truncates a long error body in the details', async () => {
      server.handle((_req, res) => {
        res.writeHead(400, { 'content-type': 'text/plain' });
        res.end('e'.repeat(10_000));
      });
      const error = await stepFailure(step.execute(stepContext(), apiConfig({ url: server.url() })));
      const data = (error.details as { data: string }).data;
      expect(data.length).toBeLessThan(2100);
      expect(data.endsWith('…')).toBe(true);
    });

    it('fails retryably on 429 with Retry-After in seconds', async () => {
      server.handle((_req, res) => {
        res.writeHead(429, { 'retry-after': '3', 'content-type': 'text/plain' });
        res.end('slow down');
      });
      const error = await stepFailure(step.execute(stepContext(), apiConfig({ url: server.url() })));
      expect(error).toMatchObject({
        code: 'HTTP_STATUS',
        retryable: true,
        retryAfterMs: 3000,
        details: { status: 429, data: 'slow down' },
      });
    });

    it('reads a Retry-After HTTP date', async () => {
      const at = new Date(Date.now() + 120_000).toUTCString();
      server.handle((_req, res) => {
        res.writeHead(429, { 'retry-after': at });
        res.end();
      });
      const error = await stepFailure(step.execute(stepContext(), apiConfig({ url: server.url() })));
      expect(error.retryAfterMs).toBeGreaterThan(110_000);
      expect(error.retryAfterMs).toBeLessThanOrEqual(120_000);
    });

    it('ignores an unreadable Retry-After', async () => {
      server.handle((_req, res) => {
        res.writeHead(429, { 'retry-after': 'soon' });
        res.end();
      });
      const error = await stepFailure(step.execute(stepContext(), apiConfig({ url: server.url() })));
      expect(error).toMatchObject({ retryable: true, retryAfterMs: undefined });
    });

    it('passes the client failures on (timeout, too large, refused)', async () => {
      server.handle(() => undefined);
      expect(
        (await stepFailure(step.execute(stepContext(), apiConfig({ url: server.url(), timeoutMs: 200 }))))
          .code,
      ).toBe('TIMEOUT');
      server.handle((_req, res) => res.end('x'.repeat(100)));
      expect(
        (
          await stepFailure(
            step.execute(stepContext(), apiConfig({ url: server.url(), maxResponseBytes: 10 })),
          )
        ).code,
      ).toBe('RESPONSE_TOO_LARGE');
      server.reset();
      const refused = await stepFailure(
        step.execute(stepContext(), apiConfig({ url: `http://127.0.0.2:${server.port}/` })),
      );
      expect(refused).toMatchObject({ code: 'DESTINATION_REFUSED', retryable: false });
      expect(server.connections).toBe(0);
    });

    it('stops when the step signal is aborted', async () => {
      const controller = new AbortController();
      // Aborted once the server holds the request (never answered), so the request is recorded within
      // this test: one aborted after a fixed delay could reach a busy server later, in the next test.
      server.handle(() => controller.abort());
      const error = await stepFailure(
        step.execute(stepContext(controller.signal), apiConfig({ url: server.url() })),
      );
      expect(error.code).toBe('TIMEOUT');
      expect(server.requests).toHaveLength(1);
    });
  });

  describe('compensate', () => {
    it('is not_compensable without a compensating request, and sends nothing', async () => {
      const outcome = await step.compensate(stepContext(), apiConfig({ url: server.url() }), {
        status: 201,
        data: {},
      });
      expect(outcome).toEqual({ status: 'not_compensable' });
      expect(server.requests).toHaveLength(0);
    });

    it('sends the compensating request rendered with the step result', async () => {
      server.handle((_req, res) => {
        res.writeHead(204);
        res.end();
      });
      const config = apiConfig({
        url: server.url('/orders'),
        method: 'POST',
        compensate: {
          method: 'DELETE',
          url: `${server.url('/orders/')}{{result.data.id}}`,
          headers: { 'X-Reason': 'rollback of {{ input.id }}' },
          payload: { order: '{{result.data.id}}', status: '{{result.status}}' },
        },
      });
      const outcome = await step.compensate(stepContext(), config, { status: 201, data: { id: 'o-42' } });
      expect(outcome).toEqual({ status: 'compensated', detail: { status: 204 } });
      const [request] = server.requests;
      expect(request).toMatchObject({ method: 'DELETE', url: '/orders/o-42' });
      expect(request.headers['x-reason']).toBe('rollback of 5');
      expect(JSON.parse(request.body)).toEqual({ order: 'o-42', status: '201' });
    });

    it('fails when the compensating request is answered outside 2xx', async () => {
      server.handle((_req, res) => {
        res.writeHead(500);
        res.end();
      });
      const config = apiConfig({
        url: server.url(),
        compensate: { method: 'DELETE', url: server.url('/x') },
      });
      const error = await stepFailure(step.compensate(stepContext(), config, { status: 200, data: null }));
      expect(error).toMatchObject({ code: 'HTTP_STATUS', details: { status: 500 } });
    });

    it('guards the compensating request too', async () => {
      const config = apiConfig({
        url: server.url(),
        compensate: { method: 'DELETE', url: `http://2130706434:${server.port}/{{result.data.id}}` },
      });
      const error = await stepFailure(
        step.compensate(stepContext(), config, { status: 200, data: { id: 1 } }),
      );
      expect(error.code).toBe('DESTINATION_REFUSED');
      expect(server.connections).toBe(0);
    });
  });
});
