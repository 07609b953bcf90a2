import { sql, type SQL } from 'drizzle-orm';
import { parseFieldPath } from '../../common/validation/field-path';
import { invalid } from './grid-load-options';

/**
 * A selector compiled to SQL:
 * - `json`: the value as jsonb (SQL NULL when missing);
 * - `text`: what `->>` gives: a string's content, the JSON text of a number, boolean, object or
 *   array, SQL NULL for JSON null and missing;
 * - `instant`: the timestamptz of a system date column;
 * - `jsonPath`: for a data field, the document column and a strict jsonpath reaching the field, so a
 *   typed comparison can run as one jsonpath predicate instead of several extractions.
 * Paths reach SQL only as whitelisted literals.
 */
export interface Operand {
  json: SQL;
  text: SQL;
  instant?: SQL;
  jsonPath?: { document: SQL; path: string };
}

/** An operand over jsonb that is already a column (a group key, a sort value computed once per row). */
export function columnOperand(column: SQL): Operand {
  return { json: column, text: sql`(${column} #>> '{}')` };
}

/** A typed system column as an operand: its JSON value and that value's text. */
function systemOperand(json: SQL, instant?: SQL): Operand {
  return { ...columnOperand(json), instant };
}

/** Top-level fields of a record. */
const SYSTEM_FIELDS: Record<string, Operand> = {
  _id: systemOperand(sql`to_jsonb(data_records.id::text)`),
  createdAt: systemOperand(sql`to_jsonb(data_records.created_at)`, sql`data_records.created_at`),
  updatedAt: systemOperand(sql`to_jsonb(data_records.updated_at)`, sql`data_records.updated_at`),
  userId: systemOperand(sql`to_jsonb(data_records.user_id::text)`),
  configId: systemOperand(sql`to_jsonb(data_records.config_id::text)`),
  siteId: systemOperand(sql`to_jsonb(data_records.site_id::text)`),
  isActive: systemOperand(sql`to_jsonb(data_records.is_active)`),
  configVersion: systemOperand(sql`to_jsonb(data_records.config_version)`),
};

const DOCUMENTS: Record<string, SQL> = {
  data: sql`data_records.data`,
  computedResults: sql`data_records.computed_results`,
};

const NULL_OPERAND: Operand = { json: sql`null::jsonb`, text: sql`null::text` };

/**
 * `#>` reads a digit-only segment as an array index when it meets an array, a jsonpath member
 * accessor never does; only paths without such segments get a jsonpath.
 */
const ARRAY_INDEX = /^\d+$/;

/** A field inside a jsonb document column; one key is read with `->`/`->>`, deeper paths with `#>`/`#>>`. */
function documentOperand(document: SQL, path: string[]): Operand {
  const jsonPath = path.some((segment) => ARRAY_INDEX.test(segment))
    ? undefined
    : // Segments are whitelisted (letters, digits, `_`, `-`), so quoting them needs no escaping.
      { document, path: `strict $${path.map((segment) => `."${segment}"`).join('')}` };
  if (path.length === 1) {
    return { json: sql`(${document} -> ${path[0]})`, text: sql`(${document} ->> ${path[0]})`, jsonPath };
  }
  // Segments are whitelisted (no comma, brace, quote or space), so the text[] literal needs no quoting.
  const literal = `{${path.join(',')}}`;
  return {
    json: sql`(${document} #> ${literal}::text[])`,
    text: sql`(${document} #>> ${literal}::text[])`,
    jsonPath,
  };
}

/**
 * Section 4: a dot path from the root of the record (`data.age`, `createdAt`); a one-segment name
 * that is not a system field means `data.<name>`. A path that does not exist reads as null.
 */
export function compileSelector(selector: string, parameter: string): Operand {
  const segments = parseFieldPath(selector, { maxSegments: 8, maxLength: 300 });
  if (!segments) throw invalid(parameter, `invalid selector "${selector.slice(0, 100)}"`);
  if (segments.length === 1) return SYSTEM_FIELDS[selector] ?? documentOperand(DOCUMENTS.data, segments);
  const [root, ...path] = segments;
  const document = Object.hasOwn(DOCUMENTS, root) ? DOCUMENTS[root] : undefined;
  return document ? documentOperand(document, path) : NULL_OPERAND;
}
