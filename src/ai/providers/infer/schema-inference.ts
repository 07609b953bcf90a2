import { fullFormats } from 'ajv-formats/dist/formats';
import type { DraftWarning } from '../config-draft-provider';

type JsonType = 'string' | 'integer' | 'number' | 'boolean' | 'object' | 'array' | 'null';
type Schema = Record<string, unknown>;

export interface InferredSchema {
  schema: Schema;
  warnings: DraftWarning[];
}

/** Low-cardinality strings become enums: at least this many values, few distinct ones, short ones. */
export const ENUM_RULE = { minValues: 4, maxDistinct: 10, maxLength: 60 } as const;

/** Formats tried in order; a string field gets one when every sample value passes Ajv's own check. */
const FORMATS = ['date-time', 'date', 'email', 'uri'] as const;

/**
 * A JSON Schema (2020-12) that every sample satisfies: types (integer when every number is whole),
 * formats, enums for low-cardinality strings, `required` for fields present (not null) in every
 * sample, observed numeric ranges, nested objects and arrays; titles from the keys. Deterministic:
 * properties keep the order in which the samples first show them.
 */
export function inferSchema(samples: Record<string, unknown>[]): InferredSchema {
  const warnings: DraftWarning[] = [];
  const ranged: string[] = [];
  const schema = objectSchema(samples, '', warnings, ranged);
  if (ranged.length > 0)
    warnings.unshift({ code: 'RANGES_FROM_SAMPLES', params: { fields: ranged.join(', ') } });
  return { schema, warnings };
}

function objectSchema(
  objects: Record<string, unknown>[],
  path: string,
  warnings: DraftWarning[],
  ranged: string[],
): Schema {
  const values = new Map<string, unknown[]>();
  const present = new Map<string, number>();
  for (const object of objects) {
    for (const [key, value] of Object.entries(object)) {
      if (value === undefined) continue;
      if (!values.has(key)) values.set(key, []);
      values.get(key)!.push(value);
      if (value !== null) present.set(key, (present.get(key) ?? 0) + 1);
    }
  }
  const properties = [...values].map(([key, list]): [string, Schema] => {
    const field = path ? `${path}.${key}` : key;
    return [key, { title: titleOf(key), ...valueSchema(list, field, warnings, ranged) }];
  });
  const required = [...values.keys()].filter((key) => present.get(key) === objects.length);
  const schema: Schema = { type: 'object', properties: Object.fromEntries(properties) };
  if (required.length > 0) schema.required = required;
  return schema;
}

function valueSchema(values: unknown[], field: string, warnings: DraftWarning[], ranged: string[]): Schema {
  const byType = new Map<JsonType, unknown[]>();
  for (const value of values) {
    const type = typeOf(value);
    if (!byType.has(type)) byType.set(type, []);
    byType.get(type)!.push(value);
  }
  // Whole and fractional numbers together are numbers.
  if (byType.has('integer') && byType.has('number')) {
    byType.get('number')!.push(...byType.get('integer')!);
    byType.delete('integer');
  }
  const nullable = byType.delete('null');
  const types = [...byType.keys()];
  if (types.length === 0) {
    warnings.push({ code: 'NO_VALUES', field, params: { field } });
    return {};
  }
  if (types.length > 1) {
    const accepted = [...types, ...(nullable ? ['null'] : [])];
    warnings.push({ code: 'MIXED_TYPES', field, params: { field, types: accepted.join(', ') } });
    return { type: accepted };
  }
  const [type] = types;
  const list = byType.get(type)!;
  const schema = typedSchema(type, list, field, warnings, ranged);
  if (nullable) schema.type = [type, 'null'];
  return schema;
}

function typedSchema(
  type: JsonType,
  values: unknown[],
  field: string,
  warnings: DraftWarning[],
  ranged: string[],
): Schema {
  switch (type) {
    case 'integer':
    case 'number': {
      // A loop, not Math.min(...values): a large array of samples would overflow the argument list.
      let minimum = Infinity;
      let maximum = -Infinity;
      for (const value of values as number[]) {
        if (value < minimum) minimum = value;
        if (value > maximum) maximum = value;
      }
      ranged.push(field);
      return { type, minimum, maximum };
    }
    case 'string':
      return stringSchema(values as string[], field, warnings);
    case 'object':
      return objectSchema(values as Record<string, unknown>[], field, warnings, ranged);
    case 'array': {
      const items = (values as unknown[][]).flat();
      return items.length > 0
        ? { type: 'array', items: valueSchema(items, `${field}[]`, warnings, ranged) }
        : { type: 'array' };
    }
    default:
      return { type };
  }
}

function stringSchema(values: string[], field: string, warnings: DraftWarning[]): Schema {
  const format = FORMATS.find((name) => values.every((value) => passesFormat(name, value)));
  if (format) return { type: 'string', format };
  const distinct = [...new Set(values)];
  if (
    values.length >= ENUM_RULE.minValues &&
    distinct.length <= ENUM_RULE.maxDistinct &&
    distinct.length * 2 <= values.length &&
    distinct.every((value) => value.trim() !== '' && value.length <= ENUM_RULE.maxLength)
  ) {
    warnings.push({ code: 'ENUM_FROM_SAMPLES', field, params: { field, values: distinct.join(', ') } });
    return { type: 'string', enum: distinct };
  }
  return { type: 'string' };
}

function passesFormat(name: (typeof FORMATS)[number], value: string): boolean {
  // A URI here is an address with a scheme and an authority (`https://...`), not any `word:word`.
  if (name === 'uri' && !/^[a-z][a-z0-9+.-]*:\/\/\S+$/i.test(value)) return false;
  const format = fullFormats[name] as unknown;
  if (format instanceof RegExp) return format.test(value);
  if (typeof format === 'function') return Boolean((format as (v: string) => boolean)(value));
  const validate = (format as { validate: RegExp | ((v: string) => boolean) }).validate;
  return validate instanceof RegExp ? validate.test(value) : Boolean(validate(value));
}

function typeOf(value: unknown): JsonType {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  if (typeof value === 'string' || typeof value === 'boolean') return typeof value as JsonType;
  return 'object';
}

/** `firstName`, `first_name`, `first-name` → "First name"; acronyms (`ID`, `URL`) stay upper case. */
export function titleOf(key: string): string {
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .split(/[\s_\-.]+/)
    .filter(Boolean)
    .map((word) => (word.length > 1 && word === word.toUpperCase() ? word : word.toLowerCase()));
  if (words.length === 0) return key;
  const sentence = words.join(' ');
  return sentence.charAt(0).toUpperCase() + sentence.slice(1);
}
