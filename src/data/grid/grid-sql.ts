import { sql, type SQL } from 'drizzle-orm';
import type { Operand } from './grid-selector';

/** One key of an ORDER BY: the value and its direction (NULLS in PostgreSQL's default place). */
export interface SortKey {
  value: SQL;
  desc: boolean;
}

export const orderByList = (keys: SortKey[]): SQL =>
  sql.join(
    keys.map((key) => sql`${key.value} ${sql.raw(key.desc ? 'desc' : 'asc')}`),
    sql`, `,
  );

/** True when the value is JSON null or missing (`->>` gives SQL NULL for both). */
export const isNullOf = (operand: Operand) => sql`(${operand.text} is null)`;

/** The numeric value of a JSON number, else NULL. */
export function numberOf(operand: Operand): SQL {
  // One jsonpath evaluation instead of two extractions (type, then value).
  if (operand.jsonPath) {
    const path = `${operand.jsonPath.path} ? (@.type() == "number")`;
    return sql`(jsonb_path_query_first(${operand.jsonPath.document}, ${path}::jsonpath, '{}'::jsonb, true))::numeric`;
  }
  return sql`(case when jsonb_typeof(${operand.json}) = 'number' then (${operand.json})::numeric end)`;
}

/** The instant of a date string (docs/grid-protocol.md section 5) or of a system date column, else NULL. */
export const instantOf = (operand: Operand) =>
  operand.instant ??
  sql`(case when jsonb_typeof(${operand.json}) = 'string' then fdws_instant(${operand.text}) end)`;

/**
 * Sort keys implementing the comparator of section 7 for one value, in direction `desc`:
 * null/missing < numbers < strings < booleans; numbers by value; two dates as instants; other
 * strings lower-cased by code unit, then the lower-case variant first. Two spellings of one instant
 * (`2021-03-15`, `2021-03-15T00:00:00.000Z`) tie, so the full record order (createdAt, _id) decides.
 * PostgreSQL computes every key of every sorted row, so each key tests the type once and does the
 * work of its own type only.
 */
export function comparatorKeys(operand: Operand, desc: boolean): SortKey[] {
  const { json, text } = operand;
  const rank = sql`(case jsonb_typeof(${json}) when 'number' then 1 when 'string' then 2 when 'boolean' then 3 when 'object' then 4 when 'array' then 5 else 0 end)`;
  // Text keys only for booleans (false < true) and strings that are not dates, so dates compare
  // only as instants.
  const notDate = operand.instant ? sql`${operand.instant} is null` : sql`fdws_instant(${text}) is null`;
  const textKey = sql`(case jsonb_typeof(${json}) when 'boolean' then ${text} when 'string' then case when ${notDate} then ${text} end end)`;
  return [
    { value: rank, desc },
    { value: numberOf(operand), desc },
    { value: instantOf(operand), desc },
    { value: sql`lower(${textKey}) collate "C"`, desc },
    { value: sql`${textKey} collate "C"`, desc: !desc },
  ];
}
