import { sql, type SQL } from 'drizzle-orm';
import { invalid } from './grid-load-options';

const SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9_-]*$/;
const FORBIDDEN = new Set(['__proto__', 'prototype', 'constructor']);

/** Top-level fields of a record, as SQL producing their JSON value (and the instant for dates). */
const SYSTEM_FIELDS: Record<string, { json: SQL; instant?: SQL }> = {
  _id: { json: sql`to_jsonb(data_records.id::text)` },
  createdAt: { json: sql`to_jsonb(data_records.created_at)`, instant: sql`data_records.created_at` },
  updatedAt: { json: sql`to_jsonb(data_records.updated_at)`, instant: sql`data_records.updated_at` },
  userId: { json: sql`to_jsonb(data_records.user_id::text)` },
  configId: { json: sql`to_jsonb(data_records.config_id::text)` },
  siteId: { json: sql`to_jsonb(data_records.site_id::text)` },
  isActive: { json: sql`to_jsonb(data_records.is_active)` },
};

/**
 * A selector compiled to SQL: `json` yields the value as jsonb (SQL NULL when missing), `instant`
 * the timestamptz of a system date column. Paths reach SQL only as whitelisted literals.
 */
export interface Operand {
  json: SQL;
  instant?: SQL;
}

const NULL_OPERAND: Operand = { json: sql`null::jsonb` };

/**
 * Section 4: a dot path from the root of the record (`data.age`, `createdAt`); a one-segment name
 * that is not a system field means `data.<name>`. A path that does not exist reads as null.
 */
export function compileSelector(selector: string, parameter: string): Operand {
  const segments = selector.split('.');
  if (
    selector.length > 300 ||
    segments.length > 8 ||
    !segments.every((s) => SEGMENT.test(s) && !FORBIDDEN.has(s))
  ) {
    throw invalid(parameter, `invalid selector "${selector.slice(0, 100)}"`);
  }
  if (segments.length === 1) {
    return SYSTEM_FIELDS[selector] ?? { json: sql`(data_records.data -> ${selector})` };
  }
  const [root, ...path] = segments;
  const literal = `{${path.join(',')}}`;
  if (root === 'data') return { json: sql`(data_records.data #> ${literal}::text[])` };
  if (root === 'computedResults') return { json: sql`(data_records.computed_results #> ${literal}::text[])` };
  return NULL_OPERAND;
}
