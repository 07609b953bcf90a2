import { Inject, Injectable } from '@nestjs/common';
import { sql, type SQL } from 'drizzle-orm';
import { DATABASE, type Database } from '../database/database.types';
import { fromRawRecord, RAW_RECORD_COLUMNS } from '../data/record.mapper';

export type ExportRow = ReturnType<typeof fromRawRecord>;

const BATCH_SIZE = 2000;

/**
 * Streams matching records oldest first from a server-side cursor, one batch at a time. The next
 * batch is fetched only after `onBatch` resolves, so a slow client slows the query instead of
 * filling memory. Returning false from `onBatch` stops early (the client went away).
 */
@Injectable()
export class RecordCursorRepository {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  async forEachBatch(
    where: SQL,
    onBatch: (rows: ExportRow[]) => Promise<boolean>,
    batchSize = BATCH_SIZE,
  ): Promise<void> {
    await this.db.transaction(async (tx) => {
      await tx.execute(
        sql`declare export_cursor no scroll cursor for
            select ${sql.raw(RAW_RECORD_COLUMNS)}
            from data_records where ${where} order by data_records.created_at, data_records.id`,
      );
      for (;;) {
        const result: any = await tx.execute(
          sql.raw(`fetch ${Math.max(1, Math.floor(batchSize))} from export_cursor`),
        );
        const rows: Record<string, unknown>[] = result.rows ?? [];
        if (rows.length === 0) break;
        if (!(await onBatch(rows.map(fromRawRecord)))) break;
        if (rows.length < batchSize) break;
      }
      await tx.execute(sql`close export_cursor`);
    });
  }
}
