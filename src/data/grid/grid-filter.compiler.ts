import { and, or, sql, type SQL } from 'drizzle-orm';
import type { Scalar } from '../../common/validation/scalar';
import { invalid, type GridFilter, type GridOperator } from './grid-load-options';
import { compileSelector, type Operand } from './grid-selector';
import { instantOf, isNullOf, numberOf } from './grid-sql';

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

/**
 * The instant of a client date string (section 5), or null when it is not a real date. A real date
 * whose instant falls outside the years 1 to 9999 (year 0, or a zone offset crossing either end) is
 * refused (400): PostgreSQL has no year 0, so it could not be compared.
 */
export function clientInstant(value: string): Date | null {
  const instant = calendarInstant(value);
  if (instant) {
    const year = instant.getUTCFullYear();
    if (year < 1 || year > 9999) throw invalid('filter', 'dates must fall in the years 1 to 9999');
  }
  return instant;
}

function calendarInstant(value: string): Date | null {
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

type ComparisonOperator = '=' | '>' | '>=' | '<' | '<=';
const COMPARISON: Record<ComparisonOperator, string> = {
  '=': '=',
  '>': '>',
  '>=': '>=',
  '<': '<',
  '<=': '<=',
};
const JSONPATH_COMPARISON: Record<ComparisonOperator, string> = {
  '=': '==',
  '>': '>',
  '>=': '>=',
  '<': '<',
  '<=': '<=',
};

/**
 * `stored op value` when the stored value is a JSON number; NULL (or false) for anything else. On a
 * data field this is one jsonpath predicate: a strict jsonpath comparison of a number with a number
 * is exact (numeric) and is unknown (NULL) for every other type, missing fields included.
 */
function compareNumber(operand: Operand, op: ComparisonOperator, value: number): SQL {
  if (operand.jsonPath) {
    const predicate = `${operand.jsonPath.path} ${JSONPATH_COMPARISON[op]} $value`;
    return sql`jsonb_path_match(${operand.jsonPath.document}, ${predicate}::jsonpath, ${JSON.stringify({ value })}::jsonb, true)`;
  }
  return sql`(${numberOf(operand)} ${sql.raw(COMPARISON[op])} ${value}::numeric)`;
}

/** `stored op value` when the stored value is a JSON boolean, else NULL. */
function compareBoolean(operand: Operand, op: ComparisonOperator, value: boolean): SQL {
  return sql`(case when jsonb_typeof(${operand.json}) = 'boolean' then (${operand.json})::boolean ${sql.raw(COMPARISON[op])} ${value} end)`;
}

/**
 * Two strings compared lower-cased by code unit. The text comparison comes first: it rejects most
 * rows before the type is looked at (`->>` also gives the text of numbers and booleans).
 */
function compareString(operand: Operand, op: ComparisonOperator, value: string, onlyNonDates: boolean): SQL {
  const nonDate = onlyNonDates ? sql` and ${instantOf(operand)} is null` : sql``;
  return sql`(lower(${operand.text}) collate "C" ${sql.raw(COMPARISON[op])} lower(${value}) collate "C" and jsonb_typeof(${operand.json}) = 'string'${nonDate})`;
}

/** `stored op client` for one comparison operator, false for incomparable types (section 5/6). */
function compare(operand: Operand, op: ComparisonOperator, value: Exclude<Scalar, null>): SQL {
  const sqlOp = sql.raw(COMPARISON[op]);
  // Each alternative is NULL or false unless the stored value has the type it compares.
  const alternatives: SQL[] = [];
  if (typeof value === 'number') {
    alternatives.push(compareNumber(operand, op, value));
    // A number against a numeric string compares as numbers; the costly pattern only runs on strings.
    alternatives.push(
      sql`(case when jsonb_typeof(${operand.json}) = 'string' and ${operand.text} ~ ${NUMERIC_TEXT.source} then (${operand.text})::numeric ${sqlOp} ${value}::numeric end)`,
    );
  } else if (typeof value === 'boolean') {
    alternatives.push(compareBoolean(operand, op, value));
    alternatives.push(
      sql`(case when jsonb_typeof(${operand.json}) = 'string' and lower(${operand.text}) in ('true', 'false') then lower(${operand.text})::boolean ${sqlOp} ${value} end)`,
    );
  } else {
    const instant = clientInstant(value);
    if (instant) {
      // Both sides dates: compare instants. A stored non-date string still compares as text.
      alternatives.push(sql`(${instantOf(operand)} ${sqlOp} ${instant.toISOString()}::timestamptz)`);
      if (!operand.instant) alternatives.push(compareString(operand, op, value, true));
    } else if (!operand.instant) {
      alternatives.push(compareString(operand, op, value, false));
    }
    if (NUMERIC_TEXT.test(value) && Number.isFinite(Number(value))) {
      alternatives.push(compareNumber(operand, op, Number(value)));
    }
    const lower = value.toLowerCase();
    if (lower === 'true' || lower === 'false')
      alternatives.push(compareBoolean(operand, op, lower === 'true'));
  }
  if (alternatives.length === 0) return sql`false`;
  // The first alternative that knows the answer gives it; a number never reaches the string tests.
  return alternatives.length === 1
    ? sql`coalesce(${alternatives[0]}, false)`
    : typeof value === 'string'
      ? sql`coalesce(${or(...alternatives)}, false)`
      : sql`coalesce(${sql.join(alternatives, sql`, `)}, false)`;
}

/** The text a string operator works on: null/missing is "", numbers and booleans their JSON text. */
function operatorText(operand: Operand): SQL {
  return sql`lower(coalesce(${operand.text}, ''))`;
}

function stringOperator(operand: Operand, op: 'contains' | 'startswith' | 'endswith', value: Scalar): SQL {
  const needle = (value === null ? '' : String(value)).toLowerCase();
  const text = operatorText(operand);
  if (op === 'contains') return sql`(strpos(${text}, ${needle}) > 0)`;
  if (op === 'startswith') return sql`starts_with(${text}, ${needle})`;
  return sql`(right(${text}, char_length(${needle}::text)) = ${needle})`;
}

function conditionSql(selector: string, operator: GridOperator, value: Scalar): SQL {
  const operand = compileSelector(selector, 'filter');
  const isNull = isNullOf(operand);
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
