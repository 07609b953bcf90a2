import type { NodeSDK } from '@opentelemetry/sdk-node';

/** Attribute carrying the request's `x-request-id` on its spans. */
export const REQUEST_ID_ATTRIBUTE = 'http.request.header.x_request_id';

let sdk: NodeSDK | null = null;

/**
 * OpenTelemetry traces, switched on by the standard variables: `OTEL_EXPORTER_OTLP_ENDPOINT` (or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`), with `OTEL_SERVICE_NAME`, `OTEL_TRACES_SAMPLER` and the other
 * `OTEL_*` variables read by the SDK itself. Without an endpoint (or with `OTEL_SDK_DISABLED=true`)
 * nothing is loaded and every span call of the code is the API's no-op.
 *
 * Must run before the HTTP server, Fastify, pg and ioredis are loaded: their instrumentations patch
 * the modules as they are required, so main.ts starts tracing first and imports the rest after.
 */
export function startTracing(env: NodeJS.ProcessEnv = process.env): boolean {
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (!endpoint || env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true' || sdk) return false;
  /* eslint-disable @typescript-eslint/no-require-imports -- loaded only when tracing is on */
  const { NodeSDK } = require('@opentelemetry/sdk-node') as typeof import('@opentelemetry/sdk-node');
  const { OTLPTraceExporter } =
    require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http');
  const { HttpInstrumentation } =
    require('@opentelemetry/instrumentation-http') as typeof import('@opentelemetry/instrumentation-http');
  const { PgInstrumentation } =
    require('@opentelemetry/instrumentation-pg') as typeof import('@opentelemetry/instrumentation-pg');
  const { IORedisInstrumentation } =
    require('@opentelemetry/instrumentation-ioredis') as typeof import('@opentelemetry/instrumentation-ioredis');
  const { FastifyOtelInstrumentation } = require('@fastify/otel') as typeof import('@fastify/otel');
  /* eslint-enable @typescript-eslint/no-require-imports */
  sdk = new NodeSDK({
    serviceName: env.OTEL_SERVICE_NAME?.trim() || 'form-data-workflow-service',
    traceExporter: new OTLPTraceExporter(),
    instrumentations: [
      new HttpInstrumentation({
        // Health probes and scrapes would drown the traces that matter.
        ignoreIncomingRequestHook: (request) => /^\/(health|metrics)\b/.test(request.url ?? ''),
      }),
      new FastifyOtelInstrumentation({ registerOnInitialization: true }),
      new PgInstrumentation(),
      new IORedisInstrumentation(),
    ],
  });
  sdk.start();
  return true;
}

/** Whether this process exports traces (startTracing started the SDK). */
export function tracingOn(): boolean {
  return sdk !== null;
}

/** Sends the spans still buffered and stops (at shutdown); nothing when tracing is off. */
export async function stopTracing(): Promise<void> {
  const running = sdk;
  sdk = null;
  await running?.shutdown().catch(() => undefined);
}
