import { Inject, Injectable } from '@nestjs/common';
import { and, eq, sql } from 'drizzle-orm';
import { isUuid } from '../common/validation/is-uuid';
import { DATABASE, type Database } from '../database/database.types';
import { rowsOf } from '../database/raw-rows';
import { dataImports } from '../database/schema';

/** Imports deleted per statement by the retention (each may take many refusal rows with it). */
const PURGE_BATCH = 100;

/** What is done to finished imports after the fact: their retention, and an importer's erasure. */
@Injectable()
export class ImportUpkeepRepository {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  /**
   * Deletes imports that finished before `cutoff` (their staged and refused rows go with them), a
   * few at a time, skipping those another instance is deleting; how many went.
   */
  async purgeFinishedBefore(cutoff: Date): Promise<number> {
    let removed = 0;
    for (;;) {
      const result = await this.db.execute(sql`
        delete from ${dataImports} where id in (
          select id from ${dataImports}
          where status not in ('receiving', 'storing') and finished_at < ${cutoff.toISOString()}::timestamptz
          limit ${PURGE_BATCH} for update skip locked
        ) returning id`);
      const batch = rowsOf(result).length;
      removed += batch;
      if (batch < PURGE_BATCH) return removed;
    }
  }

  /** Empties the importer's e-mail in the requests of their imports; how many had one. */
  async forgetImporterEmail(userId: string): Promise<number> {
    if (!isUuid(userId)) return 0;
    const rows = await this.db
      .update(dataImports)
      .set({ request: sql`jsonb_set(${dataImports.request}, '{actor,email}', '""'::jsonb)` })
      .where(
        and(
          eq(dataImports.userId, userId),
          sql`coalesce(${dataImports.request} #>> '{actor,email}', '') <> ''`,
        ),
      )
      .returning({ id: dataImports.id });
    return rows.length;
  }
}
