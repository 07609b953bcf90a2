import type { SQL } from 'drizzle-orm';
import type { Database } from './database.types';
import { rowsOf } from './raw-rows';

/** A raw statement turned into text once, run with the values of its `sql.placeholder`s. */
export type BuiltStatement = (values: Record<string, unknown>) => Promise<Record<string, unknown>[]>;

/**
 * Builds `statement` (raw SQL whose varying parts are `sql.placeholder`s) into its text and parameter
 * list once, for a statement on a hot path: drizzle otherwise walks the whole template on every call
 * (about a twentieth of the service's busy time on a create was spent there). `db.execute(...).getQuery()` only builds;
 * nothing runs until the returned function is called. The name makes it a named prepared statement
 * where the pool keeps names (DATABASE_PREPARED_STATEMENTS); otherwise it is sent unnamed like every
 * other statement (postgres-pool). Runs outside any transaction.
 */
export function buildOnce(db: Database, name: string, statement: SQL): BuiltStatement {
  const prepared = db._.session.prepareQuery(db.execute(statement).getQuery(), undefined, name, false);
  return async (values) => rowsOf(await prepared.execute(values));
}
