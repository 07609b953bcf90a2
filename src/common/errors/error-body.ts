import type { AppError, FieldError } from './app-error';

/** The one error body of the service (docs/design.md section 5). */
export interface ErrorBody {
  success: false;
  error: string;
  code: string;
  statusCode: number;
  validationErrors?: FieldError[];
  fieldResults?: unknown;
  details?: unknown;
  stack?: string;
}

/** The body of `error` with its message already translated (the `stack` is the caller's to add). */
export function errorBodyOf(error: AppError, message: string): ErrorBody {
  const body: ErrorBody = { success: false, error: message, code: error.code, statusCode: error.status };
  if (error.validationErrors) body.validationErrors = error.validationErrors;
  if (error.fieldResults !== undefined) body.fieldResults = error.fieldResults;
  if (error.details !== undefined) body.details = error.details;
  return body;
}
