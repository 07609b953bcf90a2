import { AppError } from '../../common/errors/app-error';
import { StepError } from '../steps/step-error';

/** A failed attempt as the step log records it. */
export interface StepFailure {
  code: string;
  message: string;
  retryable: boolean;
  retryAfterMs?: number;
  details?: unknown;
  provides?: Record<string, unknown>;
}

/**
 * Turns whatever a handler threw into a failure: a `StepError` says itself whether it may be
 * retried; an `AppError` from a service is retryable only when the database was unreachable or a
 * limit answered 429; anything else (a bug) is not retried.
 */
export function toStepFailure(error: unknown, translate: (error: AppError) => string): StepFailure {
  if (error instanceof StepError)
    return {
      code: error.code,
      message: error.message,
      retryable: error.retryable,
      retryAfterMs: error.retryAfterMs,
      details: error.details,
      provides: error.provides,
    };
  if (error instanceof AppError)
    return {
      code: error.code,
      message: translate(error),
      retryable: error.status === 503 || error.status === 429,
      details: error.validationErrors ? { validationErrors: error.validationErrors } : error.details,
    };
  return {
    code: 'STEP_FAILED',
    message: error instanceof Error ? error.message : 'the step failed',
    retryable: false,
  };
}
