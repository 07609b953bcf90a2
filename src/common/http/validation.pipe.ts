import { ValidationPipe, type ValidationError } from '@nestjs/common';
import { AppError, type FieldError } from '../errors/app-error';

/** class-validator errors as field errors (`address.city`). */
export function flattenValidationErrors(errors: ValidationError[], prefix = ''): FieldError[] {
  return errors.flatMap((error) => {
    // Array items as `steps[2]`, properties as `address.city` (docs/design.md section 6: `config.steps[2].config.url`).
    const field = /^\d+$/.test(error.property)
      ? `${prefix}[${error.property}]`
      : prefix
        ? `${prefix}.${error.property}`
        : error.property;
    // A missing property fails every check of its type ("must be an email"); what to fix is to send it.
    const own =
      error.value === undefined && error.constraints
        ? [{ field, rule: 'required', message: `${field} is required` }]
        : Object.entries(error.constraints ?? {}).map(([rule, message]) => ({ field, rule, message }));
    return [...own, ...flattenValidationErrors(error.children ?? [], field)];
  });
}

/** DTO validation for bodies and queries: unknown properties are refused, failures are a 422. */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    exceptionFactory: (errors) =>
      new AppError('VALIDATION_FAILED', { validationErrors: flattenValidationErrors(errors) }),
  });
}
