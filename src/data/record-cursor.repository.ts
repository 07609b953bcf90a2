import { Injectable } from '@nestjs/common';
import { sql, type SQL } from 'drizzle-orm';
import { DatabaseClient } from '../database/database-client';
import { rowsOf } from '../database/raw-rows';
import { fromRawRecord, RAW_RECORD_COLUMNS, type ListedRecordRow } from './record.mapper';
import { selectionCondition, type RecordSelection } from './record-selection';

export type OnRecordBatch = (rows: ListedRecordRow[]) => Promise<boolean>;

const BATCH_SIZE = 2000;

/**
 * Streams matching records oldest first, one batch at a time. The next batch is fetched only after
 * `onBatch` resolves, so a slow client slows the reading instead of filling memory; returning false
 * from `onBatch` stops early (the client went away).
 */
@Injectable()
export class RecordCursorRepository {
  constructor(private readonly database: DatabaseClient) {}

  forEachBatch(selection: RecordSelection, onBatch: OnRecordBatch, batchSize = BATCH_SIZE): Promise<void> {
    const size = Math.max(1, Math.floor(batchSize));
    const where = selectionCondition(selection);
    return this.database.driver === 'pglite'
      ? this.byKeyset(where, onBatch, size)
      : this.byCursor(where, onBatch, size);
  }

  /** PostgreSQL: one server-side cursor in one transaction, so the export sees one snapshot. */
  private async byCursor(where: SQL, onBatch: OnRecordBatch, size: number): Promise<void> {
    await this.database.db.transaction(async (tx) => {
      await tx.execute(
        sql`declare export_cursor no scroll cursor for
            select ${sql.raw(RAW_RECORD_COLUMNS)}
            from data_records where ${where} order by data_records.created_at, data_records.id`,
      );
      for (;;) {
        const rows = rowsOf(await tx.execute(sql.raw(`fetch ${size} from export_cursor`)));
        if (rows.length === 0) break;
        if (!(await onBatch(rows.map(fromRawRecord)))) break;
        if (rows.length < size) break;
      }
      await tx.execute(sql`close export_cursor`);
    });
  }

  /**
   * PGlite has one connection: a transaction held open for a whole export would stall every other
   * request. Each batch is a short query after the last (created_at, id) seen instead; the position
   * is kept as the database's own text, because a millisecond Date would skip or repeat rows created
   * within one millisecond.
   */
  private async byKeyset(where: SQL, onBatch: OnRecordBatch, size: number): Promise<void> {
    let after: { createdAt: string; id: string } | null = null;
    for (;;) {
      const position = after
        ? sql`and (data_records.created_at, data_records.id) > (${after.createdAt}::timestamptz, ${after.id}::uuid)`
        : sql``;
      const rows = rowsOf(
        await this.database.db.execute(
          sql`select ${sql.raw(RAW_RECORD_COLUMNS)}, data_records.created_at::text as "positionCreatedAt"
              from data_records where (${where}) ${position}
              order by data_records.created_at, data_records.id limit ${size}`,
        ),
      );
      if (rows.length === 0) break;
      if (!(await onBatch(rows.map(fromRawRecord)))) break;
      if (rows.length < size) break;
      const last = rows[rows.length - 1];
      after = { createdAt: String(last.positionCreatedAt), id: String(last.id) };
    }
  }
}
