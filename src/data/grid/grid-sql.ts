import { sql, type SQL } from 'drizzle-orm';
import type { Operand } from './grid-selector';

/** jsonb_typeof, with SQL NULL (missing) reported as 'null'. */
export const typeOf = (value: SQL) => sql`coalesce(jsonb_typeof(${value}), 'null')`;
/** The text of a jsonb string (or the JSON text of anything else). */
export const textOf = (value: SQL) => sql`(${value} #>> '{}')`;
export const numberOf = (value: SQL) =>
  sql`(case when jsonb_typeof(${value}) = 'number' then (${value})::numeric end)`;
/** The instant of a date string (GRID-PROTOCOL section 5), else NULL. */
export const instantOf = (operand: Operand) =>
  operand.instant ??
  sql`(case when jsonb_typeof(${operand.json}) = 'string' then fdws_instant(${operand.json} #>> '{}') end)`;

/**
 * Sort keys implementing the comparator of section 7 for one value, in direction `desc`:
 * null/missing < numbers < strings < booleans; numbers by value; two dates as instants; other
 * strings lower-cased by code unit, then the lower-case variant first. Two spellings of one instant
 * (`2021-03-15`, `2021-03-15T00:00:00.000Z`) tie, so the full record order (createdAt, _id) decides.
 */
export function comparatorKeys(operand: Operand, desc: boolean): SQL[] {
  const value = operand.json;
  const dir = sql.raw(desc ? 'desc' : 'asc');
  const reverse = sql.raw(desc ? 'asc' : 'desc');
  const rank = sql`(case jsonb_typeof(${value}) when 'number' then 1 when 'string' then 2 when 'boolean' then 3 when 'object' then 4 when 'array' then 5 else 0 end)`;
  // Text keys only for booleans (false < true) and strings that are not dates, so numeric sorts skip
  // the text work and dates compare only as instants.
  const text = sql`(case when jsonb_typeof(${value}) = 'boolean' or (jsonb_typeof(${value}) = 'string' and ${instantOf(operand)} is null) then ${textOf(value)} end)`;
  return [
    sql`${rank} ${dir}`,
    sql`${numberOf(value)} ${dir}`,
    sql`${instantOf(operand)} ${dir}`,
    sql`lower(${text}) collate "C" ${dir}`,
    sql`${text} collate "C" ${reverse}`,
  ];
}
