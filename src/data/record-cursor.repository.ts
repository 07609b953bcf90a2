import { Inject, Injectable } from '@nestjs/common';
import { sql, type SQL } from 'drizzle-orm';
import { DatabaseClient } from '../database/database-client';
import { DATABASE, type Database } from '../database/database.types';
import { rowsOf } from '../database/raw-rows';
import {
  fromRawRecord,
  fromRawValues,
  RAW_RECORD_COLUMNS,
  RAW_VALUES_COLUMNS,
  type ListedRecordRow,
  type RecordValues,
} from './record.mapper';
import { selectionCondition, type RecordSelection } from './record-selection';

export type OnBatch<Row> = (rows: Row[]) => Promise<boolean>;
export type OnRecordBatch = OnBatch<ListedRecordRow>;

/** The columns a batch read selects and how a raw row of them becomes a typed one. */
interface RowShape<Row> {
  columns: string;
  map: (raw: Record<string, unknown>) => Row;
}
const WHOLE_RECORDS: RowShape<ListedRecordRow> = { columns: RAW_RECORD_COLUMNS, map: fromRawRecord };
const VALUES: RowShape<RecordValues> = { columns: RAW_VALUES_COLUMNS, map: fromRawValues };

const BATCH_SIZE = 2000;

/**
 * Streams matching records oldest first, one batch at a time. At most one batch is read ahead of
 * the one `onBatch` is handling, so a slow client slows the reading instead of filling memory;
 * returning false from `onBatch` stops early (the client went away).
 */
@Injectable()
export class RecordCursorRepository {
  constructor(
    private readonly database: DatabaseClient,
    // The injected database, not `database.db`: inside a routed read it is the replica's.
    @Inject(DATABASE) private readonly db: Database,
  ) {}

  /** Whole records, as the list returns them. */
  forEachBatch(selection: RecordSelection, onBatch: OnRecordBatch, batchSize = BATCH_SIZE): Promise<void> {
    return this.read(selection, WHOLE_RECORDS, onBatch, batchSize);
  }

  /** Only what export cells need (id, createdAt, data and its key order): less to read and parse. */
  forEachValuesBatch(
    selection: RecordSelection,
    onBatch: OnBatch<RecordValues>,
    batchSize = BATCH_SIZE,
  ): Promise<void> {
    return this.read(selection, VALUES, onBatch, batchSize);
  }

  private read<Row>(
    selection: RecordSelection,
    shape: RowShape<Row>,
    onBatch: OnBatch<Row>,
    batchSize: number,
  ): Promise<void> {
    const size = Math.max(1, Math.floor(batchSize));
    const where = selectionCondition(selection);
    return this.database.driver === 'pglite'
      ? this.byKeyset(where, shape, onBatch, size)
      : this.byCursor(where, shape, onBatch, size);
  }

  /**
   * PostgreSQL: one server-side cursor in one transaction, so the export sees one snapshot. The next
   * batch is fetched while `onBatch` handles this one, so the database and Node work at once.
   */
  private async byCursor<Row>(
    where: SQL,
    shape: RowShape<Row>,
    onBatch: OnBatch<Row>,
    size: number,
  ): Promise<void> {
    await this.db.transaction(async (tx) => {
      await tx.execute(
        sql`declare export_cursor no scroll cursor for
            select ${sql.raw(shape.columns)}
            from data_records where ${where} order by data_records.created_at, data_records.id`,
      );
      const fetch = () => {
        const rows = tx.execute(sql.raw(`fetch ${size} from export_cursor`)).then(rowsOf);
        // Read ahead: if the export stops before awaiting it, its failure must not go unhandled.
        rows.catch(() => undefined);
        return rows;
      };
      let next = fetch();
      for (;;) {
        const rows = await next;
        const more = rows.length === size;
        if (more) next = fetch();
        if (rows.length === 0 || !(await onBatch(rows.map(shape.map))) || !more) break;
      }
      await tx.execute(sql`close export_cursor`);
    });
  }

  /**
   * PGlite has one connection: a transaction held open for a whole export would stall every other
   * request. Each batch is a short query after the last (created_at, id) seen instead; the position
   * is kept as the database's own text, because a millisecond Date would skip or repeat rows created
   * within one millisecond. Each batch starts where the last ended in the (config_id, created_at)
   * index: `created_at >= position` (implied by the row comparison, but only this form can bound an
   * index scan) and NULLS FIRST (created_at is never null, so the order is the same, and it is the
   * index's order read backwards). Without them every batch sorted all matching records again.
   * Nothing is read ahead: PGlite runs in this process, so it could not work while Node does.
   */
  private async byKeyset<Row>(
    where: SQL,
    shape: RowShape<Row>,
    onBatch: OnBatch<Row>,
    size: number,
  ): Promise<void> {
    let after: { createdAt: string; id: string } | null = null;
    for (;;) {
      const position = after
        ? sql`and data_records.created_at >= ${after.createdAt}::timestamptz
              and (data_records.created_at, data_records.id) > (${after.createdAt}::timestamptz, ${after.id}::uuid)`
        : sql``;
      const rows = rowsOf(
        await this.db.execute(
          sql`select ${sql.raw(shape.columns)}, data_records.created_at::text as "positionCreatedAt"
              from data_records where (${where}) ${position}
              order by data_records.created_at nulls first, data_records.id limit ${size}`,
        ),
      );
      if (rows.length === 0) break;
      if (!(await onBatch(rows.map(shape.map)))) break;
      if (rows.length < size) break;
      const last = rows[rows.length - 1];
      after = { createdAt: String(last.positionCreatedAt), id: String(last.id) };
    }
  }
}
