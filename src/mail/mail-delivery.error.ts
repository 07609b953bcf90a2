/** Why a message could not be handed over; the message names no secret (no credentials, no URL). */
export class MailDeliveryError extends Error {
  /** `SMTP_REJECTED` (the server refused), `SMTP_UNAVAILABLE` (no connection, timeout), `OUTBOX_WRITE_FAILED`, `MAIL_FAILED`. */
  readonly code: string;
  /** True when sending again later may succeed (connection problems, 4xx SMTP replies). */
  readonly retryable: boolean;
  /** The SMTP reply code, when the server answered. */
  readonly responseCode?: number;

  constructor(
    message: string,
    options: { code: string; retryable: boolean; responseCode?: number; cause?: unknown },
  ) {
    super(message, { cause: options.cause });
    this.name = 'MailDeliveryError';
    this.code = options.code;
    this.retryable = options.retryable;
    this.responseCode = options.responseCode;
  }
}

const CONNECTION_CODES = new Set([
  'ECONNECTION',
  'ETIMEDOUT',
  'ESOCKET',
  'EDNS',
  'ECONNREFUSED',
  'ECONNRESET',
]);
const FILE_CODES = new Set(['EACCES', 'EPERM', 'ENOSPC', 'EROFS', 'ENOENT', 'ENOTDIR', 'EEXIST', 'EISDIR']);

/** Classifies a nodemailer or file-system error; the original stays available as `cause`. */
export function toMailDeliveryError(error: unknown): MailDeliveryError {
  if (error instanceof MailDeliveryError) return error;
  const e = (error ?? {}) as { code?: unknown; responseCode?: unknown; message?: unknown };
  const code = typeof e.code === 'string' ? e.code : undefined;
  const responseCode = typeof e.responseCode === 'number' ? e.responseCode : undefined;
  if (responseCode !== undefined) {
    return new MailDeliveryError(`The mail server refused the message (${responseCode})`, {
      code: 'SMTP_REJECTED',
      retryable: responseCode >= 400 && responseCode < 500,
      responseCode,
      cause: error,
    });
  }
  if (code && CONNECTION_CODES.has(code)) {
    return new MailDeliveryError(`The mail server could not be reached (${code})`, {
      code: 'SMTP_UNAVAILABLE',
      retryable: true,
      cause: error,
    });
  }
  if (code && FILE_CODES.has(code)) {
    return new MailDeliveryError(`The message could not be written to the outbox (${code})`, {
      code: 'OUTBOX_WRITE_FAILED',
      retryable: false,
      cause: error,
    });
  }
  return new MailDeliveryError(`The message could not be sent${code ? ` (${code})` : ''}`, {
    code: 'MAIL_FAILED',
    retryable: false,
    cause: error,
  });
}
