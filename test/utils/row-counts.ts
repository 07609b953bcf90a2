import { sql } from 'drizzle-orm';
import { rowsOf } from '../../src/database/raw-rows';
import type { TestApp } from './test-app';

/**
 * How many rows tables hold, read in one query, for the tests that check what a request stored (or
 * that a refusal stored nothing): `countRows(t, { blobs: 'attachment_blobs' })` gives `{ blobs: 2 }`.
 * The table names are the test's own, never input.
 */
export async function countRows<K extends string>(
  t: TestApp,
  tables: Record<K, string>,
): Promise<Record<K, number>> {
  const columns = (Object.entries(tables) as [K, string][]).map(
    ([key, table]) => `(select count(*)::int from ${table}) as "${key}"`,
  );
  const [row] = rowsOf(await t.database.client.db.execute(sql.raw(`select ${columns.join(', ')}`)));
  return row as Record<K, number>;
}
