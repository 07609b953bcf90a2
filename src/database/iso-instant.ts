import { sql, type SQL } from 'drizzle-orm';

/** A timestamptz expression as text the way the API writes instants: ISO 8601, UTC, milliseconds. */
export function isoInstant(column: SQL): SQL {
  return sql`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}
