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

/** Statement names given to texts by `executeNamedByText`, at most MAX_TEXT_NAMES of them. */
const textNames = new Map<string, string>();
const MAX_TEXT_NAMES = 64;

function nameOfText(text: string): string | undefined {
  let name = textNames.get(text);
  if (name === undefined && textNames.size < MAX_TEXT_NAMES) {
    name = `by_text_${textNames.size + 1}`;
    textNames.set(text, name);
  }
  return name;
}

/**
 * Runs a statement built per call whose text takes one of a few shapes (a hot write composed of two
 * modules' parts, database/carried-write) as a named prepared statement named after its text, where
 * the pool keeps names: PostgreSQL then parses and plans each shape once per connection instead of on
 * every call (bench/README.md). Past MAX_TEXT_NAMES distinct texts, the rest go unnamed.
 */
export async function executeNamedByText(db: Database, statement: SQL): Promise<Record<string, unknown>[]> {
  const query = db.execute(statement).getQuery();
  const prepared = db._.session.prepareQuery(query, undefined, nameOfText(query.sql), false);
  return rowsOf(await prepared.execute());
}
