import { sql, type SQL } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';

/*
 * Work held under a lease in its own row (imports, erasures, workflow runs and operations): the
 * instance working on it renews `lease_until`, and any instance takes over a row whose lease
 * expired. Each repository claims its own table's rows; these are the statement parts they share.
 */

/** When a lease taken or renewed now for `leaseMs` ends, by the database's clock (one for every instance). */
export const leaseUntil = (leaseMs: number): SQL => sql`now() + ${`${leaseMs} milliseconds`}::interval`;

/**
 * The `where` of a take-over: the oldest row of `table` matching `status` whose lease expired (or
 * was never taken), locked and skipped by any other instance claiming at the same moment, so one
 * instance gets it.
 */
export function oldestAbandoned(table: PgTable & { id: PgColumn }, status: SQL): SQL {
  return sql`${table.id} = (
          select id from ${table}
          where ${status} and (lease_until is null or lease_until < now())
          order by created_at limit 1 for update skip locked
        )`;
}
