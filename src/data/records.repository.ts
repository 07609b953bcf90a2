import { Inject, Injectable } from '@nestjs/common';
import { and, count, eq, sql, type SQL } from 'drizzle-orm';
import { sameSite } from '../common/context/site-scope';
import { isUuid } from '../common/validation/is-uuid';
import { DATABASE, type Database } from '../database/database.types';
import { dataRecords } from '../database/schema';
import { compileSelector } from './grid/grid-selector';
import { comparatorKeys, orderByList } from './grid/grid-sql';
import type { PagingQuery } from './list-query.parser';
import { rowsOf } from '../database/raw-rows';
import { runningBytes, stoppedAtBytes, withinBytes } from './list-bounds';
import { fromRawRecord, RAW_RECORD_COLUMNS, type ListedRecordRow, type RecordRow } from './record.mapper';
import { equalityConditions, scopeCondition, type RecordScope } from './record-selection';

export type NewRecord = Pick<
  typeof dataRecords.$inferInsert,
  'configId' | 'userId' | 'siteId' | 'data' | 'dataKeys' | 'computedResults' | 'idempotencyKey'
>;

/** The columns a page is read with (not the workflow log, which only the single-record read returns). */
const RECORD_COLUMNS = sql.raw(
  'data_records.id, data_records.config_id, data_records.user_id, data_records.site_id, data_records.data, ' +
    'data_records.data_keys, data_records.computed_results, data_records.is_active, data_records.created_at, ' +
    'data_records.updated_at',
);

/**
 * The paging order: a system column, or a data field in the grid's comparator order (missing/null,
 * numbers numerically, strings with dates as instants and text case-insensitively, booleans); ties
 * by creation, then id, in the same direction.
 */
function orderBy(query: PagingQuery): SQL[] {
  const desc = query.order === 'desc';
  const dir = sql.raw(desc ? 'desc' : 'asc');
  const ties = [sql`${dataRecords.createdAt} ${dir}`, sql`${dataRecords.id} ${dir}`];
  if (query.sort.kind === 'data') {
    const keys = comparatorKeys(compileSelector(`data.${query.sort.path.join('.')}`, 'sortBy'), desc);
    return [orderByList(keys), ...ties];
  }
  const column = {
    createdAt: dataRecords.createdAt,
    updatedAt: dataRecords.updatedAt,
    userId: dataRecords.userId,
  }[query.sort.column];
  return query.sort.column === 'createdAt' ? ties : [sql`${column} ${dir}`, ...ties];
}

/**
 * The inserts of a submission without a save limit, the statements the create route and a
 * workflow's `save` step run most, prepared once: building them with the query builder on every
 * request cost more CPU than the rest of the insert. Two spellings each, because a placeholder in
 * a jsonb column would store JSON `null` where the record has no computed results (SQL NULL). The
 * keyed ones (a workflow step's idempotency key) let the unique key decide in the same statement.
 */
function preparedInserts(db: Database) {
  const common = {
    configId: sql.placeholder('configId'),
    userId: sql.placeholder('userId'),
    siteId: sql.placeholder('siteId'),
    data: sql.placeholder('data'),
    dataKeys: sql.placeholder('dataKeys'),
  };
  const computed = { computedResults: sql.placeholder('computedResults') };
  const keyed = { idempotencyKey: sql.placeholder('idempotencyKey') };
  const onKey = {
    target: dataRecords.idempotencyKey,
    where: sql`${dataRecords.idempotencyKey} is not null`,
  };
  return {
    withComputed: db
      .insert(dataRecords)
      .values({ ...common, ...computed })
      .returning()
      .prepare('insert_record_with_computed'),
    withoutComputed: db.insert(dataRecords).values(common).returning().prepare('insert_record'),
    keyedWithComputed: db
      .insert(dataRecords)
      .values({ ...common, ...computed, ...keyed })
      .onConflictDoNothing(onKey)
      .returning()
      .prepare('insert_keyed_record_with_computed'),
    keyedWithoutComputed: db
      .insert(dataRecords)
      .values({ ...common, ...keyed })
      .onConflictDoNothing(onKey)
      .returning()
      .prepare('insert_keyed_record'),
  };
}

async function recordByKey(db: Pick<Database, 'select'>, key: string): Promise<RecordRow | null> {
  const [row] = await db.select().from(dataRecords).where(eq(dataRecords.idempotencyKey, key)).limit(1);
  return row ?? null;
}

@Injectable()
export class RecordsRepository {
  private readonly inserts: ReturnType<typeof preparedInserts>;

  constructor(@Inject(DATABASE) private readonly db: Database) {
    this.inserts = preparedInserts(db);
  }

  /**
   * Inserts unless the user already holds `saveLimit` active records of the record's site (on a
   * shared form a user's submissions through another site's host are that site's). Concurrent creates by the same
   * user for the same configuration are serialized by a transaction-scoped advisory lock, so the
   * count and the insert cannot interleave. A record whose idempotency key is already stored is not
   * inserted again: the stored one is the outcome (`existing`), whatever the limit says now.
   */
  async insertWithinLimit(
    record: NewRecord,
    saveLimit: number | null,
  ): Promise<
    { inserted: RecordRow } | { existing: RecordRow } | { limitReached: true; existingId: string | null }
  > {
    if (saveLimit === null || !record.userId) {
      const values = {
        configId: record.configId,
        userId: record.userId ?? null,
        siteId: record.siteId ?? null,
        data: record.data,
        dataKeys: record.dataKeys,
      };
      const withoutComputed = record.computedResults === null || record.computedResults === undefined;
      if (!record.idempotencyKey) {
        const [inserted] = withoutComputed
          ? await this.inserts.withoutComputed.execute(values)
          : await this.inserts.withComputed.execute({ ...values, computedResults: record.computedResults });
        return { inserted };
      }
      // The unique key decides in the same statement; the earlier record is read only when it exists.
      const keyed = { ...values, idempotencyKey: record.idempotencyKey };
      const [inserted] = withoutComputed
        ? await this.inserts.keyedWithoutComputed.execute(keyed)
        : await this.inserts.keyedWithComputed.execute({ ...keyed, computedResults: record.computedResults });
      if (inserted) return { inserted };
      const existing = await this.findByIdempotencyKey(record.idempotencyKey);
      if (!existing) throw new Error('a record conflicted on its idempotency key and is gone');
      return { existing };
    }
    const userId = record.userId;
    return this.db.transaction(async (tx) => {
      await tx.execute(
        sql`select pg_advisory_xact_lock(hashtextextended(${`${record.configId}:${userId}`}, 0))`,
      );
      const replayed = record.idempotencyKey ? await recordByKey(tx, record.idempotencyKey) : null;
      if (replayed) return { existing: replayed };
      const existing = await tx
        .select({ id: dataRecords.id })
        .from(dataRecords)
        .where(
          and(
            eq(dataRecords.configId, record.configId),
            eq(dataRecords.userId, userId),
            eq(dataRecords.isActive, true),
            sameSite(dataRecords.siteId, record.siteId ?? null),
          ),
        )
        .orderBy(dataRecords.createdAt)
        .limit(saveLimit);
      if (existing.length >= saveLimit)
        return { limitReached: true as const, existingId: existing[0]?.id ?? null };
      const [inserted] = await tx.insert(dataRecords).values(record).returning();
      return { inserted };
    });
  }

  /** The record a workflow step already saved under this key, active or not. */
  findByIdempotencyKey(key: string): Promise<RecordRow | null> {
    return recordByKey(this.db, key);
  }

  async findActive(id: string, scope: RecordScope): Promise<RecordRow | null> {
    if (!isUuid(id)) return null;
    const [row] = await this.db
      .select()
      .from(dataRecords)
      .where(and(eq(dataRecords.id, id), scopeCondition({ ...scope, ownerId: null })))
      .limit(1);
    return row ?? null;
  }

  async replaceData(
    id: string,
    data: Record<string, unknown>,
    computedResults: Record<string, unknown> | null,
  ): Promise<RecordRow | null> {
    const [row] = await this.db
      .update(dataRecords)
      .set({ data, dataKeys: Object.keys(data), computedResults, updatedAt: new Date() })
      .where(and(eq(dataRecords.id, id), eq(dataRecords.isActive, true)))
      .returning();
    return row ?? null;
  }

  async deactivate(id: string): Promise<RecordRow | null> {
    const [row] = await this.db
      .update(dataRecords)
      .set({ isActive: false, updatedAt: new Date() })
      .where(and(eq(dataRecords.id, id), eq(dataRecords.isActive, true)))
      .returning();
    return row ?? null;
  }

  /**
   * One page in the requested order and the exact number of matches, run concurrently. The page's
   * rows stop at the first one past `maxBytes` (see withinBytes); `tooLarge` says they did.
   */
  async listPage(
    scope: RecordScope,
    query: PagingQuery,
    maxBytes: number,
  ): Promise<{ rows: ListedRecordRow[]; total: number; tooLarge: boolean }> {
    const where = and(scopeCondition(scope), ...equalityConditions(query.filters))!;
    const order = sql.join(orderBy(query), sql`, `);
    const page = sql`select ${RECORD_COLUMNS} from data_records where ${where} order by ${order}
        limit ${query.limit} offset ${(query.page - 1) * query.limit}`;
    const [raw, [{ total }]] = await Promise.all([
      this.db.execute(
        withinBytes(
          sql`select ${sql.raw(RAW_RECORD_COLUMNS)}${runningBytes(order)} from (${page}) as data_records`,
          maxBytes,
        ),
      ),
      this.db.select({ total: count() }).from(dataRecords).where(where),
    ]);
    const rows = rowsOf(raw);
    return { rows: rows.map(fromRawRecord), total: Number(total), tooLarge: stoppedAtBytes(rows, maxBytes) };
  }
}
