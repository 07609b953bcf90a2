import { Inject, Injectable } from '@nestjs/common';
import { sql, type SQL } from 'drizzle-orm';
import { DATABASE, type Database } from '../database/database.types';

export interface ExportRow {
  id: string;
  configId: string;
  userId: string | null;
  siteId: string | null;
  data: Record<string, unknown>;
  computedResults: Record<string, unknown> | null;
  createdAt: Date;
  updatedAt: Date;
}

const BATCH_SIZE = 2000;

function toExportRow(raw: Record<string, unknown>): ExportRow {
  const date = (value: unknown) => (value instanceof Date ? value : new Date(String(value)));
  const json = (value: unknown) => (typeof value === 'string' ? JSON.parse(value) : value);
  return {
    id: String(raw.id),
    configId: String(raw.config_id),
    userId: (raw.user_id as string | null) ?? null,
    siteId: (raw.site_id as string | null) ?? null,
    data: json(raw.data) as Record<string, unknown>,
    computedResults: (json(raw.computed_results) as Record<string, unknown> | null) ?? null,
    createdAt: date(raw.created_at),
    updatedAt: date(raw.updated_at),
  };
}

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
            select id, config_id, user_id, site_id, data, computed_results, created_at, updated_at
            from data_records where ${where} order by created_at, id`,
      );
      for (;;) {
        const result: any = await tx.execute(
          sql.raw(`fetch ${Math.max(1, Math.floor(batchSize))} from export_cursor`),
        );
        const rows: Record<string, unknown>[] = result.rows ?? [];
        if (rows.length === 0) break;
        if (!(await onBatch(rows.map(toExportRow)))) break;
        if (rows.length < batchSize) break;
      }
      await tx.execute(sql`close export_cursor`);
    });
  }
}
