import { sql, type SQL } from 'drizzle-orm';
import { parseFieldPath } from '../../common/validation/field-path';
import { invalid } from './grid-load-options';

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
  const segments = parseFieldPath(selector, { maxSegments: 8, maxLength: 300 });
  if (!segments) throw invalid(parameter, `invalid selector "${selector.slice(0, 100)}"`);
  if (segments.length === 1) {
    return SYSTEM_FIELDS[selector] ?? { json: sql`(data_records.data -> ${selector})` };
  }
  const [root, ...path] = segments;
  // Segments are whitelisted (no comma, brace, quote or space), so the text[] literal needs no quoting.
  const literal = `{${path.join(',')}}`;
  if (root === 'data') return { json: sql`(data_records.data #> ${literal}::text[])` };
  if (root === 'computedResults') return { json: sql`(data_records.computed_results #> ${literal}::text[])` };
  return NULL_OPERAND;
}
