/** What an outbound request's failure says: a stable code, whether another attempt may succeed, details. */
export interface OutboundHttpErrorOptions {
  /** One of `OutboundErrorCode` (`TIMEOUT`, `DESTINATION_REFUSED`, ...). */
  code: string;
  retryable?: boolean;
  /** Safe to show (host, address, limits); never a header or body. */
  details?: unknown;
}

/**
 * The one error the guarded outbound client throws (a non-2xx answer is returned, not thrown). Its
 * users give it their own meaning: the `api` workflow step maps it to a `StepError` with the same code,
 * webhooks to an attempt to retry or give up.
 */
export class OutboundHttpError extends Error {
  readonly code: string;
  readonly retryable: boolean;
  readonly details?: unknown;

  constructor(message: string, options: OutboundHttpErrorOptions) {
    super(message);
    this.name = 'OutboundHttpError';
    this.code = options.code;
    this.retryable = options.retryable ?? false;
    this.details = options.details;
  }
}
