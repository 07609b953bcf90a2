import { ERROR_CODES, type ErrorCode } from './error-codes';

export interface FieldError {
  /** The field name (`qty`, `address.city`), never a JSON pointer. */
  field: string;
  rule: string;
  message: string;
}

export interface AppErrorOptions {
  /** Overrides the status that belongs to the code; rarely needed. */
  status?: number;
  /** i18n key of the message; defaults to `errors.<code>`. */
  messageKey?: string;
  /** Interpolation arguments of the message (`{limit}`). */
  params?: Record<string, unknown>;
  validationErrors?: FieldError[];
  fieldResults?: unknown;
  details?: unknown;
}

/** The one error type of the service: a stable code, an HTTP status and a localizable message. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly messageKey: string;
  readonly params: Record<string, unknown>;
  readonly validationErrors?: FieldError[];
  readonly fieldResults?: unknown;
  readonly details?: unknown;

  constructor(code: ErrorCode, options: AppErrorOptions = {}) {
    super(code);
    this.name = 'AppError';
    this.code = code;
    this.status = options.status ?? ERROR_CODES[code];
    this.messageKey = options.messageKey ?? `errors.${code}`;
    this.params = options.params ?? {};
    this.validationErrors = options.validationErrors;
    this.fieldResults = options.fieldResults;
    this.details = options.details;
  }
}
