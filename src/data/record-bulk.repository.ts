import { Inject, Injectable } from '@nestjs/common';
import { sql, type SQL } from 'drizzle-orm';
import { DATABASE, type Database } from '../database/database.types';
import { rowsOf } from '../database/raw-rows';
import { appendEvents } from '../events/append-events';
import { appendHistory } from './history/record-history.repository';
import type { ChangeAuthor } from './records.repository';

/** Whose records a bulk insert creates: one configuration (at one version), one owner, one site. */
export interface BulkTarget {
  configId: string;
  /** The configuration's version the rows were checked against. */
  configVersion: number;
  userId: string;
  siteId: string | null;
}

/**
 * Where one bulk insert stands among a caller's others. It begins its transaction once `begins`
 * has resolved, tells `begun()` when it holds its connection, and counts once `counts` has resolved
 * (rejected: it rolls back and rejects). A caller chaining them (`begins` the one before's begun,
 * `counts` its end) gets them counted and committed in order, their inserts side by side; each
 * holds a connection only once the one before holds its own, so one connection (the embedded
 * database, a pool of one) runs them one after the other instead of waiting on itself.
 */
export interface InsertOrder {
  begins: Promise<unknown>;
  begun: () => void;
  counts: Promise<unknown>;
}

const UNORDERED: InsertOrder = {
  begins: Promise.resolve(),
  begun: () => undefined,
  counts: Promise.resolve(),
};

/**
 * Inserts of many records by one statement each (a bulk import's batches). A statement carries
 * every record's `created` history entry and, only where somebody asked for it, a `record.imported`
 * event (not `record.created`: a webhook or a workflow trigger takes imported records only when it
 * names that type, so a million-row file cannot start a million runs by accident).
 */
@Injectable()
export class RecordBulkRepository {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  /**
   * Inserts the rows of `source` (a data-modifying or plain SELECT giving `row_number int, data json,
   * computed_results json`, validated by the caller), in `row_number` order, with their entries
   * and events, and the caller's own writes `alongside` (data-modifying statements on its tables);
   * then `progress(count)`: the caller's UPDATE told how many records were inserted (an SQL
   * expression). One transaction: all of it or none of it; `progress` must find its row, or nothing
   * is kept and the answer is 0. `order` lets a caller run several side by side and still have them
   * counted and committed in its order (see InsertOrder). The number inserted.
   */
  async insertSelected(
    source: SQL,
    target: BulkTarget,
    author: ChangeAuthor,
    progress: (inserted: SQL) => SQL,
    alongside: SQL[] = [],
    order: InsertOrder = UNORDERED,
  ): Promise<number> {
    const origin = author.origin ? JSON.stringify(author.origin) : null;
    // json (not jsonb) in the source keeps the file's key order: data_keys is taken from it.
    const statement = sql`with src as (${source}),
      changed as (
        insert into data_records (config_id, config_version, user_id, site_id, data, data_keys, computed_results)
        select ${target.configId}::uuid, ${target.configVersion}::int, ${target.userId}::uuid, ${target.siteId}::uuid, src.data::jsonb,
          array(select json_object_keys(src.data)), src.computed_results::jsonb
        from src order by src.row_number
        returning *),
      entry as (${appendHistory(
        { action: 'created', userId: author.userId, origin: author.origin },
        sql`fdws_added_fields(changed.data)`,
      )} returning id, record_id, changes),
      event as (${appendEvents(sql`select 'record.imported', changed.site_id, changed.config_id,
          ${author.userId}::uuid, ${origin}::jsonb,
          json_build_object('record', fdws_record_json(row(changed.*)::data_records),
            'changes', entry.changes, 'historyId', entry.id)
        from changed join entry on entry.record_id = changed.id
        -- Asked once for the statement (a one-time filter): nobody taking them skips the join.
        where (select fdws_event_wanted('record.imported', ${target.configId}::uuid))`)})${sql.join(
        alongside.map((statement, index) => sql`, ${sql.raw(`alongside${index}`)} as (${statement})`),
      )}
      select count(*)::int as inserted from changed`;
    await order.begins;
    return this.db
      .transaction(async (tx) => {
        order.begun();
        const [row] = rowsOf(await tx.execute(statement));
        const inserted = Number(row?.inserted ?? 0);
        await order.counts;
        const counted = rowsOf(await tx.execute(sql`${progress(sql`${inserted}::int`)} returning 1`));
        if (counted.length === 0) throw new NothingCounted();
        return inserted;
      })
      .catch((error: unknown) => {
        if (error instanceof NothingCounted) return 0;
        throw error;
      });
  }
}

/** Thrown to roll back a bulk insert whose progress write found no row. */
class NothingCounted extends Error {}
