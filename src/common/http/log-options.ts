import { stdTimeFunctions, type LoggerOptions } from 'pino';

/**
 * The one shape of every log line, from the boot logger (before the application exists) and from
 * Fastify's request logger: JSON with an ISO 8601 `time`, credentials redacted.
 */
export function logOptions(level: string): LoggerOptions {
  return {
    level,
    timestamp: stdTimeFunctions.isoTime,
    redact: ['req.headers.authorization', 'req.headers.cookie', '*.password', '*.token'],
  };
}
