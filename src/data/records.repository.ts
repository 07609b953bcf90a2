import { Inject, Injectable } from '@nestjs/common';
import { and, count, eq, sql } from 'drizzle-orm';
import { isUuid } from '../common/validation/is-uuid';
import type { CarriedWrite } from '../database/carried-write';
import { DATABASE, type Database } from '../database/database.types';
import { executeParametrized } from '../database/built-statement';
import { dataRecords } from '../database/schema';
import type { PagingQuery } from './list-query.parser';
import { rowsOf } from '../database/raw-rows';
import { runningBytes, stoppedAtBytes, withinBytes } from './list-bounds';
import { fromRawRecord, RAW_RECORD_COLUMNS, type ListedRecordRow, type RecordRow } from './record.mapper';
import {
  configVersionCondition,
  equalityConditions,
  scopeCondition,
  type RecordScope,
} from './record-selection';
import { NO_FIELD_CHANGES } from './history/record-history.repository';

import {
  RECORD_COLUMNS,
  orderBy,
  entryOf,
  withHistory,
  insertStatement,
  insertBuiltOnce,
  firstRecord,
  firstRecordCarrying,
  insertCarrying,
  lockSaveLimit,
  activeRecordIds,
  recordByKey,
  atVersion,
  replaceDataStatement,
  type NewRecord,
  type ChangeAuthor,
  type AlongsideWrite,
  type RecordWrite,
} from './record-statements';

export type { NewRecord, ChangeAuthor, AlongsideWrite, RecordWrite };

@Injectable()
export class RecordsRepository {
  /** The create's statement, built once (see insertBuiltOnce). */
  private readonly insertPlain;

  constructor(@Inject(DATABASE) private readonly db: Database) {
    this.insertPlain = insertBuiltOnce(db);
  }

  /**
   * Inserts, with its `created` history entry, unless the user already holds `saveLimit` active
   * records of the record's site (on a shared form a user's submissions through another site's host
   * are that site's). Concurrent creates by the same user for the same configuration are serialized
   * by a transaction-scoped advisory lock, so the count and the insert cannot interleave. A record
   * whose idempotency key is already stored is not inserted again: the stored one is the outcome
   * (`existing`), whatever the limit says now. A `carried` write (database/carried-write: a
   * workflow run's first write) commits with the insert, in its statement or first in its
   * transaction; an `alongside` write runs after the insert, in its transaction.
   */
  async insertWithinLimit(
    record: NewRecord,
    saveLimit: number | null,
    author: ChangeAuthor,
    carried: CarriedWrite | null = null,
    alongside: AlongsideWrite | null = null,
  ): Promise<
    | { inserted: ListedRecordRow }
    | { existing: ListedRecordRow }
    | { limitReached: true; existingId: string | null }
  > {
    if ((saveLimit === null || !record.userId) && alongside) {
      const carriedStatement = carried?.take() ?? null;
      return this.db.transaction(async (tx) => {
        const inserted =
          carriedStatement && carried
            ? await firstRecordCarrying(tx, insertCarrying(record, author, carriedStatement), carried)
            : await firstRecord(tx, insertStatement(record, author));
        if (inserted) {
          await alongside(tx, inserted);
          return { inserted };
        }
        const existing = record.idempotencyKey ? await recordByKey(tx, record.idempotencyKey) : null;
        if (!existing) throw new Error('a record conflicted on its idempotency key and is gone');
        return { existing };
      });
    }
    if (saveLimit === null || !record.userId) {
      // A write handed along (a workflow run's first write) commits in this statement.
      const carriedStatement = carried?.take() ?? null;
      const inserted =
        carriedStatement && carried
          ? await firstRecordCarrying(this.db, insertCarrying(record, author, carriedStatement), carried)
          : await this.insertPlain(record, author);
      if (inserted) return { inserted };
      // Only a keyed insert inserts nothing: the earlier record is read only then.
      const existing = record.idempotencyKey ? await this.findByIdempotencyKey(record.idempotencyKey) : null;
      if (!existing) throw new Error('a record conflicted on its idempotency key and is gone');
      return { existing };
    }
    const owner = { configId: record.configId, userId: record.userId, siteId: record.siteId ?? null };
    const carriedStatement = carried?.take();
    return this.db.transaction(async (tx) => {
      if (carriedStatement) {
        const [written] = await executeParametrized(tx, carriedStatement);
        if (written) carried!.answered(written.answer);
      }
      await lockSaveLimit(tx, owner.configId, owner.userId);
      const replayed = record.idempotencyKey ? await recordByKey(tx, record.idempotencyKey) : null;
      if (replayed) return { existing: replayed };
      const existing = await activeRecordIds(tx, owner, saveLimit);
      if (existing.length >= saveLimit)
        return { limitReached: true as const, existingId: existing[0] ?? null };
      const inserted = await firstRecord(tx, insertStatement(record, author));
      if (!inserted) throw new Error('a record conflicted on its idempotency key under the lock');
      await alongside?.(tx, inserted);
      return { inserted };
    });
  }

  /** The record a workflow step already saved under this key, active or not. */
  findByIdempotencyKey(key: string): Promise<RecordRow | null> {
    return recordByKey(this.db, key);
  }

  /** The record with this id in the scope (site and state; the owner is left to the caller). */
  async findInScope(id: string, scope: RecordScope): Promise<RecordRow | null> {
    if (!isUuid(id)) return null;
    const [row] = await this.db
      .select()
      .from(dataRecords)
      .where(and(eq(dataRecords.id, id), scopeCondition({ ...scope, ownerId: null })))
      .limit(1);
    return row ?? null;
  }

  /**
   * Changes an active record of the scope under a row lock: in one transaction the row is read
   * `for update`, `decide` computes the new data from exactly that version (a merge, validation; it
   * may throw, and nothing is written), and the data is replaced with its `updated` entry and the
   * version raised by one. A concurrent change waits for the lock and then decides on this one's
   * result, so no change is lost. `decide` answering 'stale' (an If-Match naming another version)
   * writes nothing. Null when there is no such active record. An `alongside` write runs after the
   * change, in its transaction.
   */
  changeLocked(
    id: string,
    scope: RecordScope,
    decide: (row: RecordRow) => RecordWrite | 'stale',
    author: ChangeAuthor,
    alongside: AlongsideWrite | null = null,
  ): Promise<{ changed: ListedRecordRow } | { stale: RecordRow } | null> {
    if (!isUuid(id)) return Promise.resolve(null);
    return this.db.transaction(async (tx) => {
      const [row] = await tx
        .select()
        .from(dataRecords)
        .where(and(eq(dataRecords.id, id), scopeCondition({ ...scope, ownerId: null })))
        .limit(1)
        .for('update');
      if (!row) return null;
      const decision = decide(row);
      if (decision === 'stale') return { stale: row };
      const changed = await firstRecord(tx, replaceDataStatement(row, decision, author));
      if (!changed) throw new Error('a record locked for update was not updated');
      await alongside?.(tx, changed);
      return { changed };
    });
  }

  /**
   * Moves an active record to the trash (inactive, `deleted_at` now, version + 1), with a `deleted`
   * entry; with `versions`, only while it is at one of them (If-Match, checked in the update itself).
   */
  deactivate(
    id: string,
    author: ChangeAuthor,
    versions: number[] | null = null,
  ): Promise<ListedRecordRow | null> {
    const now = new Date().toISOString();
    return firstRecord(
      this.db,
      withHistory(
        sql`update data_records set is_active = false, deleted_at = ${now}::timestamptz, updated_at = ${now}::timestamptz,
            version = data_records.version + 1
          where id = ${id}::uuid and is_active ${atVersion(versions)} returning *`,
        entryOf('deleted', author),
        NO_FIELD_CHANGES,
      ),
    );
  }

  /**
   * Brings a record back from the trash, with a `restored` entry, unless its owner already holds
   * `saveLimit` active records of its configuration and site (counted under the lock creates take).
   * Null when the record is not in the trash (restored meanwhile, or purged) or, with `versions`
   * (If-Match), no longer at one of them.
   */
  async restoreWithinLimit(
    record: Pick<ListedRecordRow, 'id' | 'configId' | 'userId' | 'siteId'>,
    saveLimit: number | null,
    author: ChangeAuthor,
    versions: number[] | null = null,
  ): Promise<{ restored: ListedRecordRow } | { limitReached: true } | null> {
    const restore = (db: Pick<Database, 'execute'>) =>
      firstRecord(
        db,
        withHistory(
          sql`update data_records set is_active = true, deleted_at = null,
              updated_at = ${new Date().toISOString()}::timestamptz, version = data_records.version + 1
            where id = ${record.id}::uuid and not is_active ${atVersion(versions)} returning *`,
          entryOf('restored', author),
          NO_FIELD_CHANGES,
        ),
      );
    const userId = record.userId;
    if (saveLimit === null || !userId) {
      const restored = await restore(this.db);
      return restored ? { restored } : null;
    }
    return this.db.transaction(async (tx) => {
      await lockSaveLimit(tx, record.configId, userId);
      const owner = { configId: record.configId, userId, siteId: record.siteId };
      if ((await activeRecordIds(tx, owner, saveLimit)).length >= saveLimit)
        return { limitReached: true as const };
      const restored = await restore(tx);
      return restored ? { restored } : null;
    });
  }

  /** The ids of every record a user owns, active or in the trash (an erasure's match). */
  async idsOwnedBy(userId: string): Promise<string[]> {
    const rows = await this.db
      .select({ id: dataRecords.id })
      .from(dataRecords)
      .where(eq(dataRecords.userId, userId));
    return rows.map((row) => row.id);
  }

  /**
   * The ids of a form's records, active or in the trash, whose field at `path` (segments, checked
   * by parseFieldPath) holds `value`, compared as JSON (the string "1" is not the number 1).
   */
  async idsWithFieldValue(
    configId: string,
    path: string[],
    value: string | number | boolean,
  ): Promise<string[]> {
    const rows = await this.db
      .select({ id: dataRecords.id })
      .from(dataRecords)
      .where(
        and(
          eq(dataRecords.configId, configId),
          sql`${dataRecords.data} #> ${sql.param(path)}::text[] = ${JSON.stringify(value)}::jsonb`,
        ),
      );
    return rows.map((row) => row.id);
  }

  /** Deletes these records for good, past the trash, writing no history entry and no event; how many went. */
  async purgeErased(ids: string[]): Promise<number> {
    if (ids.length === 0) return 0;
    const rows = await this.db
      .delete(dataRecords)
      .where(sql`${dataRecords.id} = any(${sql.param(ids)}::uuid[])`)
      .returning({ id: dataRecords.id });
    return rows.length;
  }

  /**
   * Purges records in the trash since before `cutoff`, in batches; their history stays. Rows are
   * taken with SKIP LOCKED and re-checked, so instances purging at once (or a restore racing a
   * purge) each act on different rows and a second run finds nothing to do.
   */
  async purgeDeletedBefore(cutoff: Date, batchSize = 1000): Promise<number> {
    const at = cutoff.toISOString();
    let purged = 0;
    for (;;) {
      const rows = rowsOf(
        await this.db.execute(sql`delete from data_records where id in (
            select id from data_records where not is_active and deleted_at < ${at}::timestamptz
            limit ${batchSize} for update skip locked)
          and not is_active and deleted_at < ${at}::timestamptz returning id`),
      );
      purged += rows.length;
      if (rows.length < batchSize) return purged;
    }
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
    const where = and(
      scopeCondition(scope),
      configVersionCondition(query.configVersion),
      ...equalityConditions(query.filters),
    )!;
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
