import { Inject, Injectable } from '@nestjs/common';
import { asc, count, desc, sql } from 'drizzle-orm';
import { DATABASE, type Database } from '../database/database.types';
import { dataRecords } from '../database/schema';
import { selectionCondition, type RecordSelection } from './record-selection';

/** Counts over the records of a selection, for the statistics route. */
@Injectable()
export class RecordStatsRepository {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  /** Total, since local midnight and since local Monday 00:00 in `timeZone`, in one index-friendly scan. */
  async countsSince(
    selection: RecordSelection,
    timeZone: string,
  ): Promise<{ total: number; today: number; thisWeek: number }> {
    const dayStart = sql`(date_trunc('day', now() at time zone ${timeZone}) at time zone ${timeZone})`;
    const weekStart = sql`(date_trunc('week', now() at time zone ${timeZone}) at time zone ${timeZone})`;
    const [row] = await this.db
      .select({
        total: count(),
        today: sql<number>`count(*) filter (where ${dataRecords.createdAt} >= ${dayStart})`,
        thisWeek: sql<number>`count(*) filter (where ${dataRecords.createdAt} >= ${weekStart})`,
      })
      .from(dataRecords)
      .where(selectionCondition(selection));
    return { total: Number(row.total), today: Number(row.today), thisWeek: Number(row.thisWeek) };
  }

  /** Records per user, most first, then by user id. */
  async countsByUser(selection: RecordSelection): Promise<{ userId: string | null; count: number }[]> {
    const rows = await this.db
      .select({ userId: dataRecords.userId, count: count() })
      .from(dataRecords)
      .where(selectionCondition(selection))
      .groupBy(dataRecords.userId)
      .orderBy(desc(count()), asc(dataRecords.userId));
    return rows.map((row) => ({ userId: row.userId, count: Number(row.count) }));
  }
}
