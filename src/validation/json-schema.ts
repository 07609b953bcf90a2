import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import localize from 'ajv-i18n';
import type { FieldError } from '../common/errors/app-error';
import type { Locale } from '../common/i18n/locale';
import { ATTACHMENT_FORMAT } from './attachment-fields';

/** One Ajv instance for every form schema: JSON Schema 2020-12, all errors, formats, no strict mode. */
export const ajv = new Ajv2020({ allErrors: true, strict: false, messages: false, validateFormats: true });
addFormats(ajv);
// An attachment field holds the id of an upload (README "Attachments"); the upload itself is checked
// when the record links it.
ajv.addFormat(ATTACHMENT_FORMAT, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i);

/**
 * Checks a form's schema against the JSON Schema 2020-12 meta-schema with Ajv's messages on (the
 * instance above has them off, so its own refusal would read `data/type undefined`): one problem per
 * place, naming the keyword path and what is wrong.
 */
const metaSchemaChecker = new Ajv2020({ allErrors: true, strict: false });

export function schemaDefinitionErrors(schema: Record<string, unknown>): FieldError[] {
  try {
    if (metaSchemaChecker.validateSchema(schema)) return [];
  } catch (error) {
    // Ajv throws (not answers) for a `$schema` it does not know (draft-07) or that is not a string.
    return [{ field: 'schema.$schema', rule: 'jsonSchema', message: (error as Error).message }];
  }
  const byPlace = new Map<string, FieldError>();
  for (const error of metaSchemaChecker.errors ?? []) {
    const path = pointerSegments(error.instancePath).join('.');
    if (byPlace.has(path)) continue;
    const allowed = (error.params as { allowedValues?: unknown[] }).allowedValues;
    const problem = `${error.message ?? error.keyword}${allowed ? `: ${allowed.join(', ')}` : ''}`;
    byPlace.set(path, {
      field: path ? `schema.${path}` : 'schema',
      rule: 'jsonSchema',
      message: path ? `"${path}" ${problem}` : `the schema ${problem}`,
    });
  }
  return [...byPlace.values()];
}

export function compileSchema(schema: Record<string, unknown>): ValidateFunction {
  // Two configurations may carry the same $id; Ajv would refuse the second one, so ids are dropped.
  const { $id: _id, ...withoutId } = schema;
  return ajv.compile(withoutId);
}

/** `/address/city` → `address.city`; a `required` error names the missing property itself. */
function fieldOf(error: ErrorObject): string {
  const base = pointerSegments(error.instancePath);
  if (error.keyword === 'required')
    base.push(String((error.params as { missingProperty: string }).missingProperty));
  if (error.keyword === 'dependentRequired')
    base.push(String((error.params as { missingProperty: string }).missingProperty));
  if (error.keyword === 'additionalProperties') {
    base.push(String((error.params as { additionalProperty: string }).additionalProperty));
  }
  return base.join('.') || '$root';
}

/** A JSON pointer (`/address/city`) as its unescaped segments. */
function pointerSegments(pointer: string): string[] {
  return pointer
    .split('/')
    .slice(1)
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** Ajv's errors as field errors with messages in the request's language. */
export function schemaErrors(validate: ValidateFunction, locale: Locale): FieldError[] {
  const errors = (validate.errors ?? []).map((error) => ({ ...error }));
  (localize[locale] ?? localize.en)(errors);
  return errors.map((error) => ({
    field: fieldOf(error),
    rule: error.keyword,
    message: error.message ?? error.keyword,
  }));
}
