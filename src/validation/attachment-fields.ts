import type { FieldError } from '../common/errors/app-error';

/** The JSON Schema `format` that marks a string as an attachment id (README "Attachments"). */
export const ATTACHMENT_FORMAT = 'attachment';

/** The schema extensions of an attachment field, on the property itself (single file or array). */
const MAX_SIZE = 'x-maxSize';
const MEDIA_TYPES = 'x-mediaTypes';

/** `image/png`, `image/*`, `application/vnd.oasis.opendocument.text` (no parameters). */
const MEDIA_RANGE = /^[a-z0-9][a-z0-9!#$&^_.+-]*\/(\*|[a-z0-9][a-z0-9!#$&^_.+-]*)$/;

/** A top-level property of a form's schema that holds one attachment id or an array of them. */
export interface AttachmentField {
  name: string;
  multiple: boolean;
  /** Largest file in bytes; null: only ATTACHMENT_MAX_BYTES applies. */
  maxSize: number | null;
  /** Allowed media types (`type/subtype` or `type/*`); null: any. */
  mediaTypes: string[] | null;
  /** Most files of an array field (its `maxItems`); null: only ATTACHMENT_MAX_FILES_PER_RECORD applies. */
  maxFiles: number | null;
}

type Schema = Record<string, unknown>;

const isObject = (value: unknown): value is Schema =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

const isAttachmentString = (schema: unknown): boolean =>
  isObject(schema) && schema.format === ATTACHMENT_FORMAT;

/** The attachment fields of a schema (assumed valid: see attachmentDeclarationProblems). */
export function attachmentFieldsOf(schema: Schema | null | undefined): AttachmentField[] {
  const properties = isObject(schema?.properties) ? schema.properties : {};
  const fields: AttachmentField[] = [];
  for (const [name, property] of Object.entries(properties)) {
    if (!isObject(property)) continue;
    const multiple = property.type === 'array' && isAttachmentString(property.items);
    if (!multiple && !isAttachmentString(property)) continue;
    fields.push({
      name,
      multiple,
      maxSize: typeof property[MAX_SIZE] === 'number' ? property[MAX_SIZE] : null,
      mediaTypes: Array.isArray(property[MEDIA_TYPES]) ? (property[MEDIA_TYPES] as string[]) : null,
      maxFiles: multiple && typeof property.maxItems === 'number' ? property.maxItems : null,
    });
  }
  return fields;
}

/** Whether a sniffed media type is one of the field's allowed types (`image/*` allows every image). */
export function mediaTypeAllowed(field: AttachmentField, mediaType: string): boolean {
  if (!field.mediaTypes) return true;
  return field.mediaTypes.some((allowed) =>
    allowed.endsWith('/*') ? mediaType.startsWith(allowed.slice(0, -1)) : allowed === mediaType,
  );
}

/**
 * What is wrong with the attachment declarations of a schema, one problem per field: an attachment
 * field is a top-level property `{"type":"string","format":"attachment"}` or an array of those, with
 * optional `x-maxSize` (positive integer, bytes), `x-mediaTypes` (non-empty list of media types or
 * `type/*`) and, on an array, `maxItems`.
 */
export function attachmentDeclarationProblems(schema: Schema): FieldError[] {
  const problems: FieldError[] = [];
  const problem = (path: string, message: string) =>
    problems.push({ field: `schema.${path}`, rule: 'attachmentField', message: `"${path}" ${message}` });
  const properties = isObject(schema.properties) ? schema.properties : {};
  for (const [name, property] of Object.entries(properties)) {
    if (!isObject(property)) continue;
    const path = `properties.${name}`;
    if (isAttachmentString(property)) {
      if (property.type !== 'string') problem(path, 'an attachment field must be of type "string"');
    } else if (isObject(property.items) && isAttachmentString(property.items)) {
      if (property.type !== 'array') problem(path, 'a list of attachments must be of type "array"');
      else if (property.items.type !== 'string')
        problem(`${path}.items`, 'an attachment must be of type "string"');
    } else {
      if (MAX_SIZE in property || MEDIA_TYPES in property)
        problem(path, `${MAX_SIZE} and ${MEDIA_TYPES} apply to attachment fields only`);
      if (mentionsAttachment(property))
        problem(path, 'attachments must be top-level fields (a string or an array of strings)');
      continue;
    }
    const maxSize = property[MAX_SIZE];
    if (maxSize !== undefined && !(Number.isSafeInteger(maxSize) && (maxSize as number) > 0))
      problem(`${path}.${MAX_SIZE}`, 'must be a positive integer (bytes)');
    const types = property[MEDIA_TYPES];
    if (
      types !== undefined &&
      !(
        Array.isArray(types) &&
        types.length > 0 &&
        types.every((type) => typeof type === 'string' && MEDIA_RANGE.test(type))
      )
    )
      problem(
        `${path}.${MEDIA_TYPES}`,
        'must be a non-empty list of media types such as "image/png" or "image/*"',
      );
  }
  for (const key of [
    'items',
    'additionalProperties',
    'patternProperties',
    '$defs',
    'allOf',
    'anyOf',
    'oneOf',
  ])
    if (key in schema && mentionsAttachment(schema[key]))
      problem(key, 'attachments must be top-level fields (a string or an array of strings)');
  return problems;
}

/** Whether `format: "attachment"` appears anywhere inside a (sub)schema. */
function mentionsAttachment(schema: unknown): boolean {
  if (Array.isArray(schema)) return schema.some(mentionsAttachment);
  if (!isObject(schema)) return false;
  if (schema.format === ATTACHMENT_FORMAT) return true;
  return Object.values(schema).some(mentionsAttachment);
}
