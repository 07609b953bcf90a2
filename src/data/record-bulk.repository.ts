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
   * and events; `progress(count)` is the caller's write told how many records the statement
   * inserted (an SQL expression), committed with them, as are the caller's own writes `alongside`
   * (data-modifying statements on its tables). One statement: all of it or none of it.
   * The number inserted.
   */
  async insertSelected(
    source: SQL,
    target: BulkTarget,
    author: ChangeAuthor,
    progress: (inserted: SQL) => SQL,
    alongside: SQL[] = [],
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
        where (select fdws_event_wanted('record.imported', ${target.configId}::uuid))`)}),
      progress as (${progress(sql`(select count(*) from changed)`)})${sql.join(
        alongside.map((statement, index) => sql`, ${sql.raw(`alongside${index}`)} as (${statement})`),
      )}
      select count(*)::int as inserted from changed`;
    const [row] = rowsOf(await this.db.execute(statement));
    return Number(row?.inserted ?? 0);
  }
}
