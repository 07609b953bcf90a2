import { ValidationPipe, type ArgumentMetadata, type Type, type ValidationError } from '@nestjs/common';
import { getMetadataStorage, ValidationTypes } from 'class-validator';
import type { TransformerPackage } from '@nestjs/common/interfaces/external/transformer-package.interface';
import { instanceToPlain, plainToInstance, type ClassTransformOptions } from 'class-transformer';
import { AppError, type FieldError } from '../errors/app-error';
import { memoizeValidationMetadata } from '../validation/validation-metadata-memo';

const checkedAsSent = new WeakSet<object>();

/**
 * A DTO whose properties are used as they are sent (strings, numbers, free JSON; no nested DTO, no
 * type conversion): the validation pipe checks them on a shallow instance of the class instead of
 * class-transformer's copy, which walks and copies every value of a free JSON property (a workflow
 * run's `data`: about 20 KB of garbage and 0.03 ms per request). The rules and the errors are the
 * same: class-validator checks the instance with the pipe's options.
 */
export function CheckedAsSent(): ClassDecorator {
  return (target) => {
    checkedAsSent.add(target);
  };
}

/**
 * The sent properties on an instance of `cls`, as class-transformer would set them: a name of
 * Object.prototype (`constructor`, `hasOwnProperty`) is not taken over.
 */
function shallowInstance<T>(cls: Type<T>, plain: Record<string, unknown>): T {
  const instance = new cls() as Record<string, unknown>;
  for (const key of Object.keys(plain)) if (!(key in Object.prototype)) instance[key] = plain[key];
  return instance as T;
}

/** class-transformer, except for the classes marked CheckedAsSent. */
const transformer: TransformerPackage = {
  plainToInstance: <T>(cls: Type<T>, plain: unknown, options?: ClassTransformOptions): T | T[] =>
    checkedAsSent.has(cls) && typeof plain === 'object' && plain !== null && !Array.isArray(plain)
      ? shallowInstance(cls, plain as Record<string, unknown>)
      : plainToInstance(cls, plain, options),
  classToPlain: (object: unknown, options?: ClassTransformOptions) => instanceToPlain(object, options),
};

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

/** What the pipe reads of a class's rules, once per class. */
interface ClassRules {
  /**
   * Every validated property is `@IsOptional()`: then an empty object passes as it is (an absent
   * optional property skips all its checks, and there is nothing to refuse).
   */
  allOptional: boolean;
  /** The properties that take a list (`@IsArray()`, or a rule with `each`). */
  listProperties: Set<string>;
}

const rulesOfClass = new WeakMap<Type, ClassRules>();

function classRules(cls: Type): ClassRules {
  let known = rulesOfClass.get(cls);
  if (known === undefined) {
    const metadatas = getMetadataStorage().getTargetValidationMetadatas(cls, '', true, false);
    const propertiesWhere = (test: (metadata: (typeof metadatas)[number]) => boolean) =>
      new Set(metadatas.filter(test).map((metadata) => metadata.propertyName));
    const optional = propertiesWhere((metadata) => metadata.type === ValidationTypes.CONDITIONAL_VALIDATION);
    known = {
      // A class without any rule is refused by class-validator (forbidUnknownValues): left to it.
      allOptional: metadatas.length > 0 && metadatas.every((metadata) => optional.has(metadata.propertyName)),
      listProperties: propertiesWhere((metadata) => Boolean(metadata.each) || metadata.name === 'isArray'),
    };
    rulesOfClass.set(cls, known);
  }
  return known;
}

/**
 * A query whose parameters given more than once (`?page=1&page=2`) count with their last value, as
 * the record lists' own parser reads them (`lastValue`), unless the property takes a list. Without
 * it, class-transformer turns `["1", "2"]` into NaN and the answer blames the number.
 */
function lastQueryValues(cls: Type, query: Record<string, unknown>): Record<string, unknown> {
  const repeated = (key: string, value: unknown): value is unknown[] =>
    Array.isArray(value) && !classRules(cls).listProperties.has(key);
  const entries = Object.entries(query);
  if (!entries.some(([key, value]) => repeated(key, value))) return query;
  // fromEntries defines each key, so a parameter named `__proto__` stays a parameter.
  return Object.fromEntries(
    entries.map(([key, value]) => [key, repeated(key, value) ? value[value.length - 1] : value]),
  );
}

const isEmptyObject = (value: unknown): boolean =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0;

/**
 * Nest's pipe, except that an empty object for a class whose properties are all optional (most
 * query DTOs, sent without a query) becomes an instance without running class-transformer and
 * class-validator over nothing (an asynchronous validation and its promises, per parameter), and a
 * query parameter given more than once counts with its last value (`lastQueryValues`).
 */
class AppValidationPipe extends ValidationPipe {
  // Not async: the pipe runs for every parameter of every route, and a wrapper would cost a promise.
  override transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const cls = metadata.metatype;
    if (!cls || !this.toValidate(metadata)) return super.transform(value, metadata);
    // Nest's pipe reads a JSON `null` body as `{}`: a PUT of `null` would replace a set with nothing.
    if (metadata.type === 'body' && value === null) return Promise.reject(nullBody());
    if (isEmptyObject(value) && classRules(cls).allOptional) return Promise.resolve(new cls());
    const sent =
      metadata.type === 'query' && typeof value === 'object' && value !== null
        ? lastQueryValues(cls, value as Record<string, unknown>)
        : value;
    return super.transform(sent, metadata);
  }
}

const nullBody = () =>
  new AppError('VALIDATION_FAILED', {
    validationErrors: [{ field: '(body)', rule: 'isObject', message: 'must be a JSON object, not null' }],
  });

/** DTO validation for bodies and queries: unknown properties are refused, failures are a 422. */
export function createValidationPipe(): ValidationPipe {
  memoizeValidationMetadata();
  return new AppValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    transformerPackage: transformer,
    exceptionFactory: (errors) =>
      new AppError('VALIDATION_FAILED', { validationErrors: flattenValidationErrors(errors) }),
  });
}
