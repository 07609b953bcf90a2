/** Why a step failed, and whether the runner may try it again (network errors, timeouts, 5xx, 408, 429). */
export interface StepErrorOptions {
  /** A stable code for the step log (`HTTP_STATUS`, `TIMEOUT`, `DESTINATION_REFUSED`, ...). */
  code?: string;
  retryable?: boolean;
  /** A server's `Retry-After`, honoured up to the workflow's `maxDelayMs`. */
  retryAfterMs?: number;
  /** Shown in the step log and the response (never a secret). */
  details?: unknown;
  /** Context entries the failed step still produces (a failed `validate` sets `validationResult`). */
  provides?: Record<string, unknown>;
  /** What the failed step still stores under `results.<step name>` (a failed `validate` its verdict). */
  result?: unknown;
}

/**
 * The error a step handler throws to fail its step; anything else thrown fails it as not retryable
 * (code STEP_FAILED, the detail only in the log). Prefer the factories: `StepError.retryable(...)`
 * for a failure another attempt may cure, `StepError.fatal(...)` for one it never will.
 */
export class StepError extends Error {
  readonly code: string;
  readonly retryable: boolean;
  readonly retryAfterMs?: number;
  readonly details?: unknown;
  readonly provides?: Record<string, unknown>;
  readonly result?: unknown;

  constructor(message: string, options: StepErrorOptions = {}) {
    super(message);
    this.name = 'StepError';
    this.code = options.code ?? 'STEP_FAILED';
    this.retryable = options.retryable ?? false;
    this.retryAfterMs = options.retryAfterMs;
    this.details = options.details;
    this.provides = options.provides;
    this.result = options.result;
  }

  /** A transient failure (a timeout, a 503): the runner tries again under the step's retry policy. */
  static retryable(
    code: string,
    message: string,
    options: Omit<StepErrorOptions, 'code' | 'retryable'> = {},
  ): StepError {
    return new StepError(message, { ...options, code, retryable: true });
  }

  /** A failure no further attempt can cure (bad input, a refused destination): never retried. */
  static fatal(
    code: string,
    message: string,
    options: Omit<StepErrorOptions, 'code' | 'retryable' | 'retryAfterMs'> = {},
  ): StepError {
    return new StepError(message, { ...options, code, retryable: false });
  }
}
