import { Inject, Injectable } from '@nestjs/common';
import { and, or, sql, type SQL } from 'drizzle-orm';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { DATABASE, type Database } from '../../database/database.types';
import { rowsOf } from '../../database/raw-rows';
import type { GridGroupDto, GridPageDto, RecordDto } from '../dto/record.dto';
import {
  assertWithinBytes,
  assertWithinRows,
  listBoundsOf,
  listTooLarge,
  type ListBounds,
} from '../list-bounds';
import { fromRawRecord, toRecordResponse } from '../record.mapper';
import { compileGridFilter } from './grid-filter.compiler';
import { countQuery, groupItemsQuery, pageQuery } from './grid-statements';
import { groupKeyOf } from './grid-grouping';
import type { GridLoadOptions, GridSummary } from './grid-load-options';
import { columnOperand, compileSelector } from './grid-selector';
import { comparatorKeys, numberOf, orderByList } from './grid-sql';

type Row = Record<string, unknown>;

const toNumber = (value: unknown): number | null =>
  value === null || value === undefined ? null : Number(value);
const pathId = (keys: unknown[]) => JSON.stringify(keys);
const keyColumn = (index: number) => sql.raw(`k${index}`);
const emptySummary = (definitions: GridSummary[]) =>
  definitions.map((d) => (d.summaryType === 'sum' || d.summaryType === 'count' ? 0 : null));

/**
 * Runs the grid-library form of the list in the database (docs/grid-protocol.md): the filter, counts and
 * summaries are SQL aggregates, the record order is a list of sort keys, grouping is one GROUP BY per
 * level; only the requested page of records or top-level groups is brought into memory.
 */
@Injectable()
export class GridQueryService {
  private readonly bounds: ListBounds;

  constructor(
    @Inject(DATABASE) private readonly db: Database,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.bounds = listBoundsOf(config);
  }

  /**
   * `schemaOrder` orders the fields of records stored before their submitted order was kept. An
   * answer is bounded (LIST_MAX_ROWS records and top-level groups, LIST_MAX_BYTES of records): a
   * `take` above the row bound, or an answer without `take` that would pass a bound, is a 422
   * LIST_TOO_LARGE. Every query stops one row past a bound, so memory stays bounded either way.
   */
  async run(scope: SQL, options: GridLoadOptions, schemaOrder: readonly string[] = []): Promise<GridPageDto> {
    if (options.take > this.bounds.maxRows) throw listTooLarge(this.bounds);
    const where = and(scope, options.filter ? compileGridFilter(options.filter) : undefined)!;
    const grouped = options.group.length > 0;
    // With a data filter, a count of its own evaluates the filter on every record a second time, so
    // the page query counts in its own scan (a window count). Without one, a count of its own is an
    // index-only scan, far cheaper than counting the sorted rows.
    const totalInPage = options.requireTotalCount && !grouped && options.filter !== null;
    const [separateTotal, summary, body] = await Promise.all([
      options.requireTotalCount && !totalInPage ? this.count(where) : undefined,
      options.totalSummary.length > 0 ? this.totalSummaries(where, options.totalSummary) : undefined,
      grouped
        ? this.groups(where, options, schemaOrder)
        : this.page(where, options, totalInPage, schemaOrder),
    ]);
    const response: GridPageDto = { data: body.data };
    const totalCount = separateTotal ?? ('total' in body ? body.total : undefined);
    if (totalCount !== undefined) response.totalCount = totalCount;
    if (options.requireGroupCount && 'groupCount' in body) response.groupCount = body.groupCount;
    if (summary !== undefined) response.summary = summary;
    return response;
  }

  private async count(where: SQL): Promise<number> {
    return Number(rowsOf(await this.db.execute(countQuery(where)))[0].n);
  }

  /** One page of ungrouped records; with `withTotal`, the number of filtered records too. */
  private async page(
    where: SQL,
    options: GridLoadOptions,
    withTotal: boolean,
    schemaOrder: readonly string[],
  ): Promise<{ data: RecordDto[]; total?: number }> {
    // Without take, one row more than the bound tells an answer that would pass it.
    const take = options.take > 0 ? options.take : this.bounds.maxRows + 1;
    const rows = rowsOf(
      await this.db.execute(
        pageQuery(where, options.sort, options.skip, take, withTotal, this.bounds.maxBytes),
      ),
    );
    assertWithinRows(rows.length, this.bounds);
    assertWithinBytes(rows, this.bounds);
    const data = rows.map((row) => toGridRecord(row, schemaOrder));
    if (!withTotal) return { data };
    if (rows.length > 0) return { data, total: Number(rows[0].total) };
    // An empty page from the start means nothing matched; past the end, the count is asked alone.
    return { data, total: options.skip === 0 ? 0 : await this.count(where) };
  }

  /** Section 9 over all filtered records: count, sum (0 when empty), avg, min and max (null when empty). */
  private totalSummaries(where: SQL, definitions: GridSummary[]): Promise<unknown[]> {
    const source = sql`(select * from data_records where ${where}) as data_records`;
    return Promise.all(
      definitions.map(async (definition) => {
        const values = await this.summaryByGroup(source, 0, definition);
        return values.get(pathId([])) ?? emptySummary([definition])[0];
      }),
    );
  }

  /**
   * One summary per group of the first `depth` key columns (depth 0 = the whole source). The source
   * is aliased `data_records`, so selectors compile exactly as in the filter.
   */
  private async summaryByGroup(
    source: SQL,
    depth: number,
    definition: GridSummary,
  ): Promise<Map<string, unknown>> {
    const keys = Array.from({ length: depth }, (_, index) => keyColumn(index));
    const keyList = sql.join(keys, sql`, `);
    const selectKeys = depth > 0 ? sql`${keyList}, ` : sql``;
    const groupBy = depth > 0 ? sql`group by ${keyList}` : sql``;
    const pathOf = (row: Row) => pathId(keys.map((_, index) => row[`k${index}`] ?? null));
    const values = new Map<string, unknown>();
    if (
      definition.summaryType === 'count' ||
      definition.summaryType === 'sum' ||
      definition.summaryType === 'avg'
    ) {
      const value = definition.selector
        ? numberOf(compileSelector(definition.selector, 'summary'))
        : sql`null`;
      const aggregate =
        definition.summaryType === 'count'
          ? sql`count(*)`
          : definition.summaryType === 'sum'
            ? sql`coalesce(sum(${value}), 0)`
            : sql`avg(${value})`;
      const rows = rowsOf(
        await this.db.execute(sql`select ${selectKeys}${aggregate} as v from ${source} ${groupBy}`),
      );
      for (const row of rows) values.set(pathOf(row), toNumber(row.v));
      return values;
    }
    // min / max: the first non-null value per group in comparator order, returned as stored.
    const operand = compileSelector(definition.selector!, 'summary');
    const notNull = sql`${operand.text} is not null`;
    const order = orderByList(comparatorKeys(operand, definition.summaryType === 'max'));
    const rows = rowsOf(
      await this.db.execute(
        depth > 0
          ? sql`select distinct on (${keyList}) ${keyList}, ${operand.json} as v from ${source} where ${notNull} order by ${keyList}, ${order}`
          : sql`select ${operand.json} as v from ${source} where ${notNull} order by ${order} limit 1`,
      ),
    );
    for (const row of rows) values.set(pathOf(row), row.v);
    return values;
  }

  private async groups(
    where: SQL,
    options: GridLoadOptions,
    schemaOrder: readonly string[],
  ): Promise<{ data: GridGroupDto[]; groupCount: number }> {
    const levels = options.group;
    const keysSelect = sql.join(
      levels.map((group, index) => sql`${groupKeyOf(group)} as ${keyColumn(index)}`),
      sql`, `,
    );
    const keyed = sql`(select ${keysSelect}, data_records.* from data_records where ${where}) as data_records`;
    const levelOrder = (depth: number) =>
      orderByList(
        levels.slice(0, depth).flatMap((group, index) => [
          ...comparatorKeys(columnOperand(keyColumn(index)), group.desc),
          // Distinct keys that compare equal (one instant spelled two ways) still come in one order.
          { value: sql`${keyColumn(index)}::text collate "C"`, desc: false },
        ]),
      );

    // Top-level groups in key order, counted before skip/take.
    const limit = options.take > 0 ? options.take : this.bounds.maxRows + 1;
    const top = rowsOf(
      await this.db.execute(
        sql`select k0, count(*) over () as group_count from ${keyed} group by k0 order by ${levelOrder(1)}
            limit ${limit} ${options.skip > 0 ? sql`offset ${options.skip}` : sql``}`,
      ),
    );
    assertWithinRows(top.length, this.bounds);
    const groupCount =
      top.length > 0
        ? Number(top[0].group_count)
        : Number(
            rowsOf(
              await this.db.execute(sql`select count(*) as n from (select k0 from ${keyed} group by k0) t`),
            )[0].n,
          );
    if (top.length === 0) return { data: [], groupCount };

    // Deeper levels and items only for the page's top-level groups.
    const paged = options.skip > 0 || options.take > 0;
    const matchKey = (column: SQL, key: unknown) =>
      key === null || key === undefined
        ? sql`${column} is null`
        : sql`${column} = ${JSON.stringify(key)}::jsonb`;
    const source = paged
      ? sql`(select * from ${keyed} where ${or(...top.map((row) => matchKey(keyColumn(0), row.k0)))}) as data_records`
      : keyed;

    const nodes = new Map<string, GridGroupDto>();
    const roots: GridGroupDto[] = [];
    for (let depth = 1; depth <= levels.length; depth++) {
      const keys = sql.join(
        Array.from({ length: depth }, (_, index) => keyColumn(index)),
        sql`, `,
      );
      const rows = rowsOf(
        await this.db.execute(
          sql`select ${keys}, count(*) as n from ${source} group by ${keys} order by ${levelOrder(depth)}
              limit ${this.bounds.maxRows + 1}`,
        ),
      );
      // Groups of all levels together count against the row bound.
      assertWithinRows(nodes.size + rows.length, this.bounds);
      for (const row of rows) {
        const path = Array.from({ length: depth }, (_, index) => row[`k${index}`] ?? null);
        const node: GridGroupDto = { key: path[depth - 1], items: [], count: Number(row.n) };
        if (options.groupSummary.length > 0) node.summary = emptySummary(options.groupSummary);
        nodes.set(pathId(path), node);
        if (depth === 1) roots.push(node);
        else nodes.get(pathId(path.slice(0, -1)))?.items?.push(node);
      }
      for (const [index, definition] of options.groupSummary.entries()) {
        for (const [id, value] of await this.summaryByGroup(source, depth, definition)) {
          const node = nodes.get(id);
          if (node?.summary) node.summary[index] = value;
        }
      }
    }

    const last = levels[levels.length - 1];
    if (last.isExpanded) {
      const itemWhere = paged
        ? and(where, or(...top.map((row) => matchKey(groupKeyOf(levels[0]), row.k0))))!
        : where;
      const itemKeys = sql.join(
        levels.map((group, index) => sql`${groupKeyOf(group)} as ${sql.raw(`"__k${index}"`)}`),
        sql`, `,
      );
      const items = rowsOf(
        await this.db.execute(
          groupItemsQuery(
            itemWhere,
            levels,
            options.sort,
            itemKeys,
            this.bounds.maxRows + 1,
            this.bounds.maxBytes,
          ),
        ),
      );
      assertWithinRows(nodes.size + items.length, this.bounds);
      assertWithinBytes(items, this.bounds);
      for (const row of items) {
        const path = levels.map((_, index) => row[`__k${index}`] ?? null);
        nodes.get(pathId(path))?.items?.push(toGridRecord(row, schemaOrder));
      }
    } else {
      for (const [id, node] of nodes)
        if ((JSON.parse(id) as unknown[]).length === levels.length) node.items = null;
    }
    return { data: roots, groupCount };
  }
}

/** A record of the grid response: the same shape as the paging list returns. */
function toGridRecord(row: Row, schemaOrder: readonly string[]): RecordDto {
  return toRecordResponse(fromRawRecord(row), { schemaOrder });
}
