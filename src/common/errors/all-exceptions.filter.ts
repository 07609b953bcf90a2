import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Inject } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { Translator } from '../i18n/translator.service';
import { AppError } from './app-error';
import { DatabaseHealth } from '../../database/database-health';
import { DatabaseMetrics } from '../../database/database-metrics';
import { isDatabaseError, isDatabaseUnavailable } from './database-unavailable';
import { errorBodyOf } from './error-body';
import type { ErrorCode } from './error-codes';

const QUEUE_FULL_RETRY_AFTER_S = 5;

const CODE_BY_STATUS: Record<number, ErrorCode> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'ROUTE_NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  422: 'VALIDATION_FAILED',
  429: 'RATE_LIMITED',
  503: 'DATABASE_UNAVAILABLE',
};

const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'INVALID_JSON',
  FST_ERR_CTP_INVALID_JSON_BODY: 'INVALID_JSON',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'BAD_REQUEST',
};

/** Turns whatever was thrown into an AppError; anything unrecognised is a bug (500). */
export function toAppError(exception: unknown): AppError {
  if (exception instanceof AppError) return exception;
  if (isDatabaseUnavailable(exception)) return new AppError('DATABASE_UNAVAILABLE');
  if (exception instanceof HttpException) {
    // Nest re-throws Fastify's body-parser errors as plain HttpExceptions carrying Fastify's message.
    if (exception.getStatus() === 400 && /valid JSON|Body cannot be empty/i.test(exception.message)) {
      return new AppError('INVALID_JSON');
    }
    const code = CODE_BY_STATUS[exception.getStatus()];
    return code ? new AppError(code) : new AppError('INTERNAL_ERROR', { status: exception.getStatus() });
  }
  const fastifyError = exception as { code?: unknown; statusCode?: unknown; name?: unknown };
  if (typeof fastifyError?.code === 'string' && FASTIFY_CODES[fastifyError.code]) {
    return new AppError(FASTIFY_CODES[fastifyError.code]);
  }
  if (exception instanceof SyntaxError && fastifyError.statusCode === 400)
    return new AppError('INVALID_JSON');
  if (
    typeof fastifyError?.statusCode === 'number' &&
    fastifyError.statusCode >= 400 &&
    fastifyError.statusCode < 500
  ) {
    return new AppError(CODE_BY_STATUS[fastifyError.statusCode] ?? 'BAD_REQUEST', {
      status: fastifyError.statusCode,
    });
  }
  return new AppError('INTERNAL_ERROR');
}

/**
 * The development `stack` of an error body: the error's name and its call frames, never its
 * message. A database error's message is the SQL text with its parameters (the submitted values),
 * and the body must not carry them in any mode. When the stack does not start with the message as
 * V8 wrote it (the message was changed later), nothing is given rather than a guess.
 */
export function framesOf(exception: unknown): string | undefined {
  if (!(exception instanceof Error) || typeof exception.stack !== 'string') return undefined;
  const header = String(exception);
  if (!exception.stack.startsWith(header)) return undefined;
  return `${exception.name}${exception.stack.slice(header.length)}`;
}

@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly translator: Translator,
    private readonly databaseMetrics: DatabaseMetrics,
    private readonly databaseHealth: DatabaseHealth,
  ) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    const error = toAppError(exception);
    if (error.status >= 500 && isDatabaseError(exception)) this.databaseMetrics.countQueryError();
    if (error.code === 'DATABASE_UNAVAILABLE' && !(exception instanceof AppError))
      this.databaseHealth.unavailable(exception);
    // Resolved once for the request in its onRequest hook.
    const locale = request.locale ?? this.config.defaultLocale;

    const body = errorBodyOf(error, this.translator.translate(error.messageKey, locale, error.params));
    const stack = this.config.nodeEnv === 'development' ? framesOf(exception) : undefined;
    if (stack) body.stack = stack;

    const log = {
      statusCode: error.status,
      code: error.code,
      err: exception instanceof Error ? exception : undefined,
    };
    if (error.status >= 500)
      request.log?.error(log, exception instanceof Error ? exception.message : 'error');
    else request.log?.info({ statusCode: error.status, code: error.code }, error.code);

    if (error.code === 'RATE_LIMITED' && !reply.hasHeader('retry-after')) {
      reply.header('retry-after', Math.ceil(this.config.throttleTtlMs / 1000));
    }
    // A full workflow queue frees up as runs finish, which no one can tell in advance: a short hint.
    if (error.code === 'WORKFLOW_QUEUE_FULL') reply.header('retry-after', QUEUE_FULL_RETRY_AFTER_S);
    // Refused before its body arrived (too large, wrong type, no right to upload): Node would read
    // the rest of the body to keep the connection, and the client's next request on it would wait
    // behind a body that may never come. The connection closes after the answer instead.
    if (request.raw?.complete === false) reply.header('connection', 'close');
    void reply.status(error.status).header('content-type', 'application/json; charset=utf-8').send(body);
  }
}
