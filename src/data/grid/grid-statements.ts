import { sql, type SQL } from 'drizzle-orm';
import { runningBytes, withinBytes } from '../list-bounds';
import { RAW_RECORD_COLUMNS } from '../record.mapper';
import type { GridGroup, GridSort } from './grid-load-options';
import { columnOperand, compileSelector, type Operand } from './grid-selector';
import { comparatorKeys, orderByList, type SortKey } from './grid-sql';

/** The grid's statements over `data_records`: count, a page, and the items of a page's groups. */

const RECORD_COLUMNS = sql.raw(RAW_RECORD_COLUMNS);
const SYSTEM_NAMES = new Set([
  '_id',
  'createdAt',
  'updatedAt',
  'userId',
  'configId',
  'siteId',
  'isActive',
  'configVersion',
]);

/** `age` and `data.age` name the same field (the alias of section 4). */
const canonical = (selector: string) =>
  selector.includes('.') || SYSTEM_NAMES.has(selector) ? selector : `data.${selector}`;
/** `select count(*)` of the filtered records. */
export function countQuery(where: SQL): SQL {
  return sql`select count(*) as n from data_records where ${where}`;
}

/**
 * The selectors of the full record order (section 7) before createdAt and _id: group values, then
 * the sort entries whose selector was not already used.
 */
function orderSelectors(groups: GridGroup[], sort: GridSort[]): { operand: Operand; desc: boolean }[] {
  const used = new Set(groups.map((group) => canonical(group.selector)));
  const entries = groups.map((group) => ({
    operand: compileSelector(group.selector, 'group'),
    desc: group.desc,
  }));
  for (const entry of sort) {
    if (used.has(canonical(entry.selector))) continue;
    used.add(canonical(entry.selector));
    entries.push({ operand: compileSelector(entry.selector, 'sort'), desc: entry.desc });
  }
  return entries;
}

const CREATION_ORDER = (qualifier: string): SortKey[] => [
  { value: sql.raw(`${qualifier}created_at`), desc: false },
  { value: sql.raw(`${qualifier}id`), desc: false },
];

/**
 * The records of the page's groups in full record order, with `groupKeys` to place each in its
 * group: at most `limit`, and stopping one record past `maxBytes` (withinBytes).
 */
export function groupItemsQuery(
  where: SQL,
  groups: GridGroup[],
  sort: GridSort[],
  groupKeys: SQL,
  limit: number,
  maxBytes: number,
): SQL {
  const keys = orderSelectors(groups, sort).flatMap((entry) => comparatorKeys(entry.operand, entry.desc));
  const order = orderByList([...keys, ...CREATION_ORDER('data_records.')]);
  const items = sql`select ${RECORD_COLUMNS}, ${groupKeys}${runningBytes(order)} from data_records where ${where}
      order by ${order} limit ${limit}`;
  return withinBytes(items, maxBytes);
}

/**
 * One page of ungrouped records in full record order (`take` 0 = all), stopping one record past
 * `maxBytes` (withinBytes); with `withTotal`, every row carries the number of filtered records as
 * `total`, counted in the same scan by a window.
 *
 * Each sort value is read from the record once, by an inner query: PostgreSQL computes every key of
 * every sorted row, and `offset 0` keeps it from copying the extraction into each comparator key.
 * The window and the sort hold only ids, creation times and keys, not whole records, so a filter
 * that keeps most records does not spill them to disk; the page's records are then read by id.
 */
export function pageQuery(
  where: SQL,
  sort: GridSort[],
  skip: number,
  take: number,
  withTotal: boolean,
  maxBytes: number,
): SQL {
  const values: SQL[] = [];
  const keys = orderSelectors([], sort).flatMap(({ operand, desc }, index) => {
    values.push(sql`, ${operand.json} as ${sql.raw(`v${index}`)}`);
    const precomputed = columnOperand(sql.raw(`sorted.v${index}`));
    if (!operand.instant) return comparatorKeys(precomputed, desc);
    values.push(sql`, ${operand.instant} as ${sql.raw(`i${index}`)}`);
    return comparatorKeys({ ...precomputed, instant: sql.raw(`sorted.i${index}`) }, desc);
  });
  const keyNames = keys.map((_, index) => `k${index}`);
  const keyColumns = keys.map((key, index) => sql`, ${key.value} as ${sql.raw(keyNames[index])}`);
  const orderOf = (qualifier: string) =>
    orderByList([
      ...keys.map((key, index) => ({ value: sql.raw(`${qualifier}${keyNames[index]}`), desc: key.desc })),
      ...CREATION_ORDER(qualifier),
    ]);
  const sorted = sql`select data_records.id, data_records.created_at${sql.join(values)} from data_records
      where ${where}${values.length > 0 ? sql` offset 0` : sql``}`;
  const page = sql`select sorted.id, sorted.created_at${sql.join(keyColumns)}${withTotal ? sql`, count(*) over () as total` : sql``}
      from (${sorted}) as sorted order by ${orderOf('')}
      ${take > 0 ? sql`limit ${take}` : sql``} ${skip > 0 ? sql`offset ${skip}` : sql``}`;
  const records = sql`select ${RECORD_COLUMNS}${withTotal ? sql`, page.total` : sql``}${runningBytes(orderOf('page.'))}
      from (${page}) as page join data_records on data_records.id = page.id`;
  return withinBytes(records, maxBytes);
}
