import type { LoggerService } from '@nestjs/common';
import type { FastifyBaseLogger } from 'fastify';

/**
 * A structured line: `msg` is the message, every other field goes into the JSON line as it is
 * (`logger.warn({ msg, runId, workflowId, code })`), so an operator can filter on the ids.
 */
export interface StructuredLog {
  msg: string;
  [field: string]: unknown;
}

function isStructured(message: unknown): message is StructuredLog {
  return (
    typeof message === 'object' && message !== null && typeof (message as StructuredLog).msg === 'string'
  );
}

/** Routes Nest's own log lines into Fastify's pino logger, so there is one JSON log stream. */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly pino: FastifyBaseLogger) {}
  log(message: unknown, context?: string) {
    this.write('info', message, context);
  }
  error(message: unknown, trace?: string, context?: string) {
    // Nest's ExceptionHandler reports a failed boot and rethrows it; main.ts logs it once, as one line.
    if (context === 'ExceptionHandler') return;
    this.write('error', message, context, trace);
  }
  warn(message: unknown, context?: string) {
    this.write('warn', message, context);
  }
  debug(message: unknown, context?: string) {
    this.write('debug', message, context);
  }
  verbose(message: unknown, context?: string) {
    this.write('trace', message, context);
  }

  private write(
    level: 'info' | 'error' | 'warn' | 'debug' | 'trace',
    message: unknown,
    context: string | undefined,
    trace?: string,
  ) {
    const extra = trace === undefined ? {} : { trace };
    if (isStructured(message)) {
      const { msg, ...fields } = message;
      this.pino[level]({ context, ...extra, ...fields }, msg);
    } else this.pino[level]({ context, ...extra }, String(message));
  }
}
