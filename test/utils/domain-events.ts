import { sql } from 'drizzle-orm';
import { rowsOf } from '../../src/database/raw-rows';
import type { TestApp } from './test-app';

/**
 * How many domain events the app has written so far: the outbox's sequence, read because the
 * dispatcher may already have handed the events out and removed their rows.
 */
export async function domainEventsWritten(t: TestApp): Promise<number> {
  const db = t.database.client.db;
  const [{ name }] = rowsOf(
    await db.execute(sql`select pg_get_serial_sequence('domain_events', 'seq') as name`),
  );
  const [row] = rowsOf(
    await db.execute(
      sql.raw(`select case when is_called then last_value else 0 end as n from ${String(name)}`),
    ),
  );
  return Number(row.n);
}
