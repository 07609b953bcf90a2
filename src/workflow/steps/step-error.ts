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
}

/** The error a step handler throws to fail its step; anything else thrown fails it as not retryable. */
export class StepError extends Error {
  readonly code: string;
  readonly retryable: boolean;
  readonly retryAfterMs?: number;
  readonly details?: unknown;
  readonly provides?: Record<string, unknown>;

  constructor(message: string, options: StepErrorOptions = {}) {
    super(message);
    this.name = 'StepError';
    this.code = options.code ?? 'STEP_FAILED';
    this.retryable = options.retryable ?? false;
    this.retryAfterMs = options.retryAfterMs;
    this.details = options.details;
    this.provides = options.provides;
  }
}
