import { AppError } from '../../../common/errors/app-error';
import { isDatabaseError, isDatabaseUnavailable } from '../../../common/errors/database-unavailable';
import type { ErrorCode } from '../../../common/errors/error-codes';
import { StepError } from '../../sdk/step-error';

/** A failed attempt as the step log records it. */
export interface StepFailure {
  code: string;
  message: string;
  retryable: boolean;
  retryAfterMs?: number;
  details?: unknown;
  provides?: Record<string, unknown>;
  /** Stored under `results.<step name>` although the step failed (a failed validate's verdict). */
  result?: unknown;
}

/** Turns an AppError into a message in the run's language. */
export type Translate = (error: AppError) => string;

/**
 * A failure the engine itself reports (WORKFLOW_TIMEOUT, INTERRUPTED, ...): its code is an
 * ErrorCode, its message the code's i18n message in the run's language.
 */
export function engineFailure(
  code: ErrorCode,
  translate: Translate,
  options: { params?: Record<string, unknown>; retryable?: boolean; details?: unknown } = {},
): StepFailure {
  return {
    code,
    message: translate(new AppError(code, { params: options.params })),
    retryable: options.retryable ?? false,
    ...(options.details !== undefined ? { details: options.details } : {}),
  };
}

/**
 * Turns whatever a handler threw into a failure: a `StepError` says itself whether it may be
 * retried; an `AppError` from a service is retryable only when the database was unreachable or a
 * limit answered 429. Anything else (a bug, a driver error) gets a stable code and a short message:
 * its own text (SQL, driver detail) goes to the log only, never into a run record.
 */
export function toStepFailure(error: unknown, translate: Translate): StepFailure {
  if (error instanceof StepError)
    return {
      code: error.code,
      message: error.message,
      retryable: error.retryable,
      retryAfterMs: error.retryAfterMs,
      details: error.details,
      provides: error.provides,
      ...(error.result !== undefined ? { result: error.result } : {}),
    };
  if (error instanceof AppError)
    return {
      code: error.code,
      message: translate(error),
      retryable: error.status === 503 || error.status === 429,
      details: error.validationErrors ? { validationErrors: error.validationErrors } : error.details,
    };
  if (isDatabaseUnavailable(error))
    return engineFailure('DATABASE_UNAVAILABLE', translate, { retryable: true });
  if (isDatabaseError(error)) return engineFailure('DATABASE_ERROR', translate);
  return engineFailure('STEP_FAILED', translate);
}

/** True when `toStepFailure` hides the error's own text (it belongs in the log). */
export function isUnexpected(error: unknown): boolean {
  return !(error instanceof StepError) && !(error instanceof AppError);
}
