import { sql, type SQL } from 'drizzle-orm';
import type { GridGroup } from './grid-load-options';
import { compileSelector } from './grid-selector';
import { instantOf } from './grid-sql';

const DATE_PART_SQL: Record<string, string> = {
  year: 'year',
  quarter: 'quarter',
  month: 'month',
  day: 'day',
  dayOfWeek: 'dow',
  hour: 'hour',
  minute: 'minute',
  second: 'second',
};

/**
 * The key of a group level as jsonb (section 8): the stored value (null for missing), or the
 * interval key: `v - (v % n)` with the remainder taking v's sign, or a UTC date part.
 */
export function groupKeyOf(group: GridGroup): SQL {
  const operand = compileSelector(group.selector, 'group');
  const value = operand.json;
  if (!group.interval)
    return sql`(case when coalesce(jsonb_typeof(${value}), 'null') = 'null' then null else ${value} end)`;
  if (group.interval.kind === 'number') {
    const n = group.interval.size;
    return sql`(case when jsonb_typeof(${value}) = 'number' then to_jsonb((${value})::numeric - mod((${value})::numeric, ${n}::numeric)) end)`;
  }
  const part = sql.raw(DATE_PART_SQL[group.interval.part]);
  return sql`to_jsonb(floor(extract(${part} from (${instantOf(operand)} at time zone 'UTC')))::int)`;
}
