import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { LogController } from 'fastify';
import { trace } from '@opentelemetry/api';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { SwaggerModule } from '@nestjs/swagger';
import { AppModule, type AppModuleOptions } from './app.module';
import { EarlyErrorAnswers } from './common/http/early-errors';
import { registerBodyGuard } from './common/http/body-guard';
import { registerExactJsonNumbers } from './common/http/exact-numbers';
import { buildOpenApiDocument } from './common/http/openapi-document';
import { registerFormBodies } from './common/http/form-body';
import { registerStreamedBodies } from './common/http/streamed-body';
import { STREAMED_CONTENT_TYPES } from './imports/import-options';
import { registerRawBodyRoutes } from './common/http/raw-body';
import { MULTIPART, registerMultipartBodies } from './common/http/multipart-body';
import { registerGracefulClose } from './common/http/graceful-close';
import { registerSecurityHeaders } from './common/http/security-headers';
import { PinoNestLogger } from './common/http/pino-nest-logger';
import { logOptions } from './common/http/log-options';
import { REQUEST_ID_ATTRIBUTE, stopTracing } from './common/telemetry/tracing';
import { Metrics } from './common/metrics/metrics.service';
import { Translator } from './common/i18n/translator.service';
import { resolveLocale } from './common/i18n/locale';
import type { AppConfig } from './config/app-config';
import type { DatabaseClient } from './database/database-client';
import { ReadRouting } from './database/replicas/read-routing';
import { registerWritePositionHeader } from './database/replicas/write-position-header';

const ATTACHMENT_UPLOAD_ROUTE = 'POST /api/data/:configId/attachments';
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Cross-origin access for the origins in CORS_ORIGINS: every method the API uses, the headers an SPA sends. */
export const CORS_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
export const CORS_ALLOWED_HEADERS = [
  'Authorization',
  'Content-Type',
  'Accept-Language',
  'X-Request-Id',
  'Idempotency-Key',
  'Prefer',
  'If-Match',
  'If-None-Match',
  'X-Database-Position',
];
/** Response headers a browser client may read. */
export const CORS_EXPOSED_HEADERS = [
  'Content-Disposition',
  'X-Request-Id',
  'Retry-After',
  'Location',
  'ETag',
  'X-Database-Position',
];

/** Reuses a caller's well-formed x-request-id so logs can be correlated across services. */
function requestIdOf(request: IncomingMessage): string {
  const header = request.headers['x-request-id'];
  return typeof header === 'string' && REQUEST_ID.test(header) ? header : randomUUID();
}

/** Creates the fully configured application; main.ts listens on it, tests call `inject` on it. */
export async function createApp(
  config: AppConfig,
  database?: DatabaseClient,
  options: { modules?: AppModuleOptions['modules'] } = {},
): Promise<NestFastifyApplication> {
  const earlyErrors = new EarlyErrorAnswers();
  const adapter = new FastifyAdapter({
    bodyLimit: config.bodyLimit,
    clientErrorHandler: earlyErrors.onClientError,
    // A request without Host is answered in the one error body (onRequest, below), not by Node.
    http: { requireHostHeader: false },
    frameworkErrors: earlyErrors.onFrameworkError,
    // Shutdown: idle keep-alive sockets are closed at once; see registerGracefulClose for the rest.
    forceCloseConnections: 'idle',
    return503OnClosing: false,
    trustProxy: config.trustProxy,
    genReqId: requestIdOf,
    // One line per request (below) instead of Fastify's two ("incoming request", "request
    // completed"): half the logging work on every request, and the line a reader needs.
    logController: new LogController({ disableRequestLogging: true }),
    logger: logOptions(config.logLevel),
  });
  const fastify = adapter.getInstance();
  // Nest logs through pino from its first line: a boot failure is JSON like every other line.
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot({ config, database, modules: options.modules }),
    adapter,
    { logger: new PinoNestLogger(fastify.log), abortOnError: false },
  );

  // Callback hooks, not async ones: they run on every request, and an async hook costs a promise.
  fastify.server.on('checkExpectation', earlyErrors.onUnmetExpectation);
  fastify.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    if (earlyErrors.answeredMissingHost(request, reply)) return;
    // The request's span (when tracing is on) carries its id, so logs and traces meet.
    trace.getActiveSpan()?.setAttribute(REQUEST_ID_ATTRIBUTE, request.id);
    request.locale = resolveLocale(request, config.defaultLocale);
    done();
  });
  const translator = app.get(Translator);
  earlyErrors.translate = (messageKey) => translator.translate(messageKey, config.defaultLocale);
  const metrics = app.get(Metrics);
  fastify.addHook('onResponse', (request, reply, done) => {
    metrics.observeRequest(
      request.method,
      request.routeOptions.url ?? 'unmatched',
      reply.statusCode,
      reply.elapsedTime / 1000,
    );
    // The request and reply themselves: Fastify's serializers make `req` (method, url, host,
    // remoteAddress, remotePort) and `res` (statusCode) of them; a plain object of our own lost
    // its fields in the `req` serializer.
    request.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed');
    done();
  });
  registerBodyGuard(fastify, config.bodyMaxDepth);
  // The grid-library store's form bodies (docs/grid-protocol.md section 16); any other form body is a 415.
  registerFormBodies(
    fastify,
    {
      'POST /api/data/:configId': ['values'],
      'PUT /api/data/:configId': ['key', 'values'],
      'DELETE /api/data/:configId': ['key'],
    },
    config.bodyMaxDepth,
  );
  // A bulk import's file is streamed (README "Bulk import"), past BODY_LIMIT.
  registerStreamedBodies(fastify, { 'POST /api/data/:configId/import': STREAMED_CONTENT_TYPES });
  // Attachment uploads are streamed from the socket (README "Attachments"), past BODY_LIMIT; a
  // multipart upload, and a record sent with its files, are streamed part by part.
  registerRawBodyRoutes(fastify, [ATTACHMENT_UPLOAD_ROUTE], [MULTIPART]);
  await registerMultipartBodies(app, [ATTACHMENT_UPLOAD_ROUTE, 'POST /api/data/:configId'], {
    // One byte over the largest file: the upload's own check, as the bytes arrive, answers first.
    fileSize: config.attachmentMaxBytes + 1,
    files: config.attachmentMaxFilesPerRecord,
    fields: 1,
    fieldSize: config.bodyLimit,
  });
  registerGracefulClose(fastify);
  registerWritePositionHeader(fastify, app.get(ReadRouting));
  fastify.addHook('preClose', (done) => {
    fastify.log.info('Shutting down: finishing requests in flight, then runs and connections');
    done();
  });
  fastify.addHook('onClose', (_instance, done) => {
    fastify.log.info('Stopped');
    stopTracing().then(() => done(), done);
  });

  registerSecurityHeaders(fastify);

  const wildcard = config.corsOrigins.includes('*');
  app.enableCors({
    origin: wildcard ? true : config.corsOrigins.length > 0 ? config.corsOrigins : false,
    credentials: !wildcard,
    methods: CORS_METHODS,
    allowedHeaders: CORS_ALLOWED_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
  });

  SwaggerModule.setup('api-docs', app, () => buildOpenApiDocument(app), {
    jsonDocumentUrl: 'api-docs-json',
    yamlDocumentUrl: 'api-docs-yaml',
  });

  app.enableShutdownHooks();
  await app.init();
  // Nest registers its JSON body parser in init(); the number check wraps it.
  registerExactJsonNumbers(fastify, config.bodyLimit);
  // Bodies are JSON (and the grid store's form bodies). Fastify's default text/plain parser handed a
  // DTO a string, so JSON sent as text (fetch's default for a string body) was refused field by
  // field ("title is required"); without it, that is a 415 UNSUPPORTED_MEDIA_TYPE.
  fastify.removeContentTypeParser('text/plain');
  await fastify.ready();
  return app;
}
