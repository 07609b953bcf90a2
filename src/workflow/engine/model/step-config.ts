import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import type { FieldError } from '../../../common/errors/app-error';
import { flattenValidationErrors } from '../../../common/http/validation.pipe';

/**
 * What is wrong with a step's (rendered) config against its type's config class: the engine's one
 * check, used at save time, before every run of a step and by the step test kit.
 */
export function stepConfigProblems(
  configClass: new () => object,
  config: unknown,
  prefix: string,
): FieldError[] {
  const instance = plainToInstance(configClass, config ?? {});
  const errors = validateSync(instance, { whitelist: true, forbidNonWhitelisted: true });
  return flattenValidationErrors(errors, prefix);
}
