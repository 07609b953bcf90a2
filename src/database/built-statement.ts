import type { Query, SQL } from 'drizzle-orm';
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

/**
 * A statement, or a part of one, as a template whose varying values are `sql.placeholder`s, and
 * those values. The template is a long-lived object (a module constant, or one `composedOnce`
 * made): it is turned into text once, and PostgreSQL parses and plans it once per connection where
 * the pool keeps names (`executeParametrized`). Building a statement from its values on every call
 * instead made drizzle walk the whole template each time: about a tenth of the service's CPU in a
 * workflow run (bench/README.md).
 */
export interface Parametrized {
  template: SQL;
  values: Record<string, unknown>;
}

/** The values of two parts of one statement; a name in both would give one part the other's value. */
export function valuesOfBoth(
  first: Record<string, unknown>,
  second: Record<string, unknown>,
): Record<string, unknown> {
  // Copied, then added to one by one: a spread of both (with the same check) took 30 us per call.
  const both = Object.assign({}, first);
  for (const name in second) {
    if (Object.hasOwn(both, name)) throw new Error(`placeholder ${name} is in two parts of one statement`);
    both[name] = second[name];
  }
  return both;
}

/**
 * `compose` memoized on its part: the same part object gives the same template object, so a
 * statement made of another module's part is built and named once per part, not once per call.
 */
export function composedOnce<Part extends object>(compose: (part: Part) => SQL): (part: Part) => SQL {
  const composed = new WeakMap<Part, SQL>();
  return (part) => {
    let template = composed.get(part);
    if (template === undefined) {
      template = compose(part);
      composed.set(part, template);
    }
    return template;
  };
}

interface BuiltTemplate {
  query: Query;
  name: string | undefined;
}

/** Each template's text and statement name, made on its first run. */
const builtTemplates = new WeakMap<SQL, BuiltTemplate>();
let templatesNamed = 0;
/** Names given at most (each a prepared statement on every connection that ran it); the rest run unnamed. */
const MAX_TEMPLATE_NAMES = 64;

function builtOf(db: Pick<Database, 'execute'>, template: SQL): BuiltTemplate {
  let built = builtTemplates.get(template);
  if (built === undefined) {
    const name = templatesNamed < MAX_TEMPLATE_NAMES ? `template_${++templatesNamed}` : undefined;
    built = { query: db.execute(template).getQuery(), name };
    builtTemplates.set(template, built);
  }
  return built;
}

/**
 * Runs `statement` on `db`, the pool or a transaction: its template's text is made once, and sent as
 * a named prepared statement where the pool keeps names (DATABASE_PREPARED_STATEMENTS), otherwise
 * unnamed like every other statement.
 */
export async function executeParametrized(
  db: Pick<Database, '_' | 'execute'>,
  statement: Parametrized,
): Promise<Record<string, unknown>[]> {
  const { query, name } = builtOf(db, statement.template);
  const prepared = db._.session.prepareQuery(query, undefined, name, false);
  return rowsOf(await prepared.execute(statement.values));
}
