import { HttpStatus } from '@nestjs/common';

/**
 * Every stable error code with its HTTP status. The i18n message key is `errors.<CODE>`, so adding
 * a code means adding its message to `i18n/en/errors.json` and `i18n/hu/errors.json`.
 */
export const ERROR_CODES = {
  BAD_REQUEST: HttpStatus.BAD_REQUEST,
  INVALID_JSON: HttpStatus.BAD_REQUEST,
  INVALID_QUERY: HttpStatus.BAD_REQUEST,
  DATA_VALIDATION_FAILED: HttpStatus.BAD_REQUEST,
  DATA_SAVE_LIMIT_REACHED: HttpStatus.BAD_REQUEST,
  UNAUTHORIZED: HttpStatus.UNAUTHORIZED,
  INVALID_CREDENTIALS: HttpStatus.UNAUTHORIZED,
  TOKEN_INVALID: HttpStatus.UNAUTHORIZED,
  FORBIDDEN: HttpStatus.FORBIDDEN,
  NOT_FOUND: HttpStatus.NOT_FOUND,
  ROUTE_NOT_FOUND: HttpStatus.NOT_FOUND,
  CONFIG_NOT_FOUND: HttpStatus.NOT_FOUND,
  RECORD_NOT_FOUND: HttpStatus.NOT_FOUND,
  USER_NOT_FOUND: HttpStatus.NOT_FOUND,
  ROLE_NOT_FOUND: HttpStatus.NOT_FOUND,
  SITE_NOT_FOUND: HttpStatus.NOT_FOUND,
  WORKFLOW_NOT_FOUND: HttpStatus.NOT_FOUND,
  METHOD_NOT_ALLOWED: HttpStatus.METHOD_NOT_ALLOWED,
  CONFLICT: HttpStatus.CONFLICT,
  EMAIL_TAKEN: HttpStatus.CONFLICT,
  PAYLOAD_TOO_LARGE: HttpStatus.PAYLOAD_TOO_LARGE,
  UNSUPPORTED_MEDIA_TYPE: HttpStatus.UNSUPPORTED_MEDIA_TYPE,
  VALIDATION_FAILED: HttpStatus.UNPROCESSABLE_ENTITY,
  RATE_LIMITED: HttpStatus.TOO_MANY_REQUESTS,
  INTERNAL_ERROR: HttpStatus.INTERNAL_SERVER_ERROR,
  DATABASE_UNAVAILABLE: HttpStatus.SERVICE_UNAVAILABLE,
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;
