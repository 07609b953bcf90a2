import type { FieldError } from './app-error';

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
