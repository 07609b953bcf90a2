import { Inject, Injectable } from '@nestjs/common';
import { asc, count, desc, sql } from 'drizzle-orm';
import { DATABASE, type Database } from '../database/database.types';
import { rowsOf } from '../database/raw-rows';
import { dataRecords } from '../database/schema';
import { selectionCondition, type RecordSelection } from './record-selection';

export interface RecordCounts {
  total: number;
  today: number;
  thisWeek: number;
  byUser: { userId: string | null; count: number }[];
}

/** Counts over the records of a selection, for the statistics route. */
@Injectable()
export class RecordStatsRepository {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  /**
   * Records per user (most first, then by user id), all of them, and those created since local
   * midnight and since local Monday 00:00 in `timeZone`. The records are counted once, per user (an
   * index-only scan of `(config_id, user_id)`), and the total is the sum of those counts; the two
   * boundary counts are range scans of `(config_id, created_at)`, each boundary computed once.
   */
  async counts(selection: RecordSelection, timeZone: string): Promise<RecordCounts> {
    const [byUser, since] = await Promise.all([
      this.countsByUser(selection),
      this.countsSince(selection, timeZone),
    ]);
    const total = byUser.reduce((sum, user) => sum + user.count, 0);
    return { total, ...since, byUser };
  }

  private async countsByUser(selection: RecordSelection): Promise<RecordCounts['byUser']> {
    const rows = await this.db
      .select({ userId: dataRecords.userId, count: count() })
      .from(dataRecords)
      .where(selectionCondition(selection))
      .groupBy(dataRecords.userId)
      .orderBy(desc(count()), asc(dataRecords.userId));
    return rows.map((row) => ({ userId: row.userId, count: Number(row.count) }));
  }

  /**
   * One statement, two counts. Each boundary sits in the WHERE clause of its own count, where the
   * index scan evaluates it once; as a `count(*) filter (where ...)` it was computed for every row
   * and the whole selection was read.
   */
  private async countsSince(
    selection: RecordSelection,
    timeZone: string,
  ): Promise<{ today: number; thisWeek: number }> {
    const since = (unit: 'day' | 'week') =>
      sql`(select count(*) from ${dataRecords} where ${selectionCondition(selection)}
           and ${dataRecords.createdAt} >= (date_trunc(${sql.raw(`'${unit}'`)}, now() at time zone ${timeZone}) at time zone ${timeZone}))`;
    const [row] = rowsOf(
      await this.db.execute(sql`select ${since('day')} as today, ${since('week')} as this_week`),
    );
    return { today: Number(row.today), thisWeek: Number(row.this_week) };
  }
}
