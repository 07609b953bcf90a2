import { and, or, sql, type SQL } from 'drizzle-orm';
import type { Scalar } from '../../common/validation/scalar';
import type { GridFilter, GridOperator } from './grid-load-options';
import { compileSelector, type Operand } from './grid-selector';
import { instantOf, numberOf, textOf, typeOf } from './grid-sql';

const DATE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?)?$/;
const NUMERIC_TEXT = /^\s*-?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?\s*$/;

/**
 * The spelling `dx.aspnet.data.js` gives a JS Date in a filter value: `M/D/YYYY`, or
 * `M/D/YYYY HH:mm:ss[.fff]` when the time is not midnight (section 5).
 */
const STORE_DATE = /^(\d{1,2})\/(\d{1,2})\/(\d{4})(?: (\d{1,2}):(\d{2}):(\d{2})(?:\.(\d{1,3}))?)?$/;

/** A UTC instant of calendar parts, or null when they are not a real date and time (no roll-over). */
function utcInstant(parts: { year: number; month: number; day: number; ms?: number }): Date | null {
  const check = new Date(Date.UTC(parts.year, parts.month - 1, parts.day));
  // Date.UTC maps years 0..99 to 1900..1999; setUTCFullYear keeps the year as written.
  check.setUTCFullYear(parts.year);
  if (
    check.getUTCFullYear() !== parts.year ||
    check.getUTCMonth() !== parts.month - 1 ||
    check.getUTCDate() !== parts.day
  )
    return null;
  return new Date(check.getTime() + (parts.ms ?? 0));
}

/** The instant of a client date string (section 5), or null when it is not a real date. */
export function clientInstant(value: string): Date | null {
  const store = STORE_DATE.exec(value);
  if (store) {
    const [hours, minutes, seconds] = [store[4], store[5], store[6]].map((part) => Number(part ?? 0));
    const fraction = Number((store[7] ?? '').padEnd(3, '0'));
    if (hours > 23 || minutes > 59 || seconds > 59) return null;
    // No zone on the wire: read as UTC, so the date the user picked stays that date.
    return utcInstant({
      year: Number(store[3]),
      month: Number(store[1]),
      day: Number(store[2]),
      ms: ((hours * 60 + minutes) * 60 + seconds) * 1000 + fraction,
    });
  }
  if (!DATE.test(value)) return null;
  const normalized =
    value.length === 10 ? `${value}T00:00:00Z` : /(Z|[+-]\d{2}:\d{2})$/.test(value) ? value : `${value}Z`;
  const instant = new Date(normalized);
  if (Number.isNaN(instant.getTime())) return null;
  // Reject dates JS silently rolls over (2021-02-30 → March 2).
  const [year, month, day] = value.slice(0, 10).split('-').map(Number);
  return utcInstant({ year, month, day }) ? instant : null;
}

const COMPARISON: Record<string, string> = { '=': '=', '>': '>', '>=': '>=', '<': '<', '<=': '<=' };

/** `stored op client` for one comparison operator, false for incomparable types (section 5/6). */
function compare(operand: Operand, op: '=' | '>' | '>=' | '<' | '<=', value: Exclude<Scalar, null>): SQL {
  const v = operand.json;
  const sqlOp = sql.raw(COMPARISON[op]);
  const alternatives: SQL[] = [];
  if (typeof value === 'number') {
    alternatives.push(sql`(${numberOf(v)} ${sqlOp} ${value}::numeric)`);
    // A number against a numeric string compares as numbers.
    alternatives.push(
      sql`(case when jsonb_typeof(${v}) = 'string' and ${textOf(v)} ~ ${NUMERIC_TEXT.source} then (${textOf(v)})::numeric ${sqlOp} ${value}::numeric end)`,
    );
  } else if (typeof value === 'boolean') {
    alternatives.push(
      sql`(case when jsonb_typeof(${v}) = 'boolean' then (${v})::boolean ${sqlOp} ${value} end)`,
    );
    alternatives.push(
      sql`(case when jsonb_typeof(${v}) = 'string' and lower(${textOf(v)}) in ('true', 'false') then lower(${textOf(v)})::boolean ${sqlOp} ${value} end)`,
    );
  } else {
    const instant = clientInstant(value);
    if (instant) {
      // Both sides dates: compare instants. A stored non-date string still compares as text.
      alternatives.push(sql`(${instantOf(operand)} ${sqlOp} ${instant.toISOString()}::timestamptz)`);
      if (!operand.instant) {
        alternatives.push(
          sql`(jsonb_typeof(${v}) = 'string' and ${instantOf(operand)} is null and lower(${textOf(v)}) collate "C" ${sqlOp} lower(${value}) collate "C")`,
        );
      }
    } else if (!operand.instant) {
      alternatives.push(
        sql`(jsonb_typeof(${v}) = 'string' and lower(${textOf(v)}) collate "C" ${sqlOp} lower(${value}) collate "C")`,
      );
    }
    if (NUMERIC_TEXT.test(value) && Number.isFinite(Number(value))) {
      alternatives.push(sql`(${numberOf(v)} ${sqlOp} ${Number(value)}::numeric)`);
    }
    const lower = value.toLowerCase();
    if (lower === 'true' || lower === 'false') {
      alternatives.push(
        sql`(case when jsonb_typeof(${v}) = 'boolean' then (${v})::boolean ${sqlOp} ${lower === 'true'} end)`,
      );
    }
  }
  return alternatives.length === 0 ? sql`false` : sql`coalesce(${or(...alternatives)}, false)`;
}

/** The text a string operator works on: null/missing is "", numbers and booleans their JSON text. */
function operatorText(v: SQL): SQL {
  return sql`lower(coalesce(case when jsonb_typeof(${v}) = 'null' then '' else ${textOf(v)} end, ''))`;
}

function stringOperator(operand: Operand, op: 'contains' | 'startswith' | 'endswith', value: Scalar): SQL {
  const needle = (value === null ? '' : String(value)).toLowerCase();
  const text = operatorText(operand.json);
  if (op === 'contains') return sql`(strpos(${text}, ${needle}) > 0)`;
  if (op === 'startswith') return sql`starts_with(${text}, ${needle})`;
  return sql`(right(${text}, char_length(${needle}::text)) = ${needle})`;
}

function conditionSql(selector: string, operator: GridOperator, value: Scalar): SQL {
  const operand = compileSelector(selector, 'filter');
  const isNull = sql`(${typeOf(operand.json)} = 'null')`;
  switch (operator) {
    case '=':
      return value === null ? isNull : compare(operand, '=', value);
    case '<>':
      return value === null ? sql`not ${isNull}` : sql`not ${compare(operand, '=', value)}`;
    case '>':
    case '>=':
    case '<':
    case '<=':
      return value === null ? sql`false` : compare(operand, operator, value);
    case 'contains':
    case 'startswith':
    case 'endswith':
      return stringOperator(operand, operator, value);
    case 'notcontains':
      return sql`not ${stringOperator(operand, 'contains', value)}`;
  }
}

/** The grid `filter` as a WHERE condition with bound values (section 6); never NULL, so `not` is exact. */
export function compileGridFilter(filter: GridFilter): SQL {
  switch (filter.kind) {
    case 'condition':
      return conditionSql(filter.selector, filter.operator, filter.value);
    case 'not':
      return sql`(not ${compileGridFilter(filter.inner)})`;
    case 'group': {
      const members = filter.members.map(compileGridFilter);
      return sql`(${filter.connector === 'and' ? and(...members) : or(...members)})`;
    }
  }
}
