import { Client, Pool } from 'pg';

/**
 * A node-postgres client that sends every statement unnamed. drizzle's prepared statements carry a
 * name, and a named statement lives on one server connection: behind a pooler in transaction mode
 * (PgBouncer before 1.21, or without `max_prepared_statements`) the next transaction gets another
 * connection, where the name is unknown ("does not exist") or taken by an earlier text ("already
 * exists"). Unnamed, the statement text built once by drizzle is still reused; only PostgreSQL's
 * parse and plan are repeated.
 */
class UnnamedStatementClient extends Client {
  override query(...args: unknown[]): any {
    const [config] = args;
    if (
      config !== null &&
      typeof config === 'object' &&
      typeof (config as { name?: unknown }).name === 'string' &&
      // COPY streams and cursors are submittables: passed through as they are.
      typeof (config as { submit?: unknown }).submit !== 'function'
    ) {
      args[0] = { ...config, name: undefined };
    }
    return (super.query as (...rest: unknown[]) => unknown)(...args);
  }
}

/**
 * The node-postgres pool of the service. `preparedStatements` (DATABASE_PREPARED_STATEMENTS) keeps
 * drizzle's named statements, parsed and planned once per server connection: only for a direct
 * connection or a pooler in session mode (or one that tracks prepared statements).
 */
export function createPostgresPool(options: {
  url: string;
  max: number;
  preparedStatements?: boolean;
}): Pool {
  const pool = new Pool({
    connectionString: options.url,
    max: options.max,
    ...(options.preparedStatements ? {} : { Client: UnnamedStatementClient }),
  });
  // An idle client losing its server must not crash the process; the next query reports it.
  pool.on('error', () => undefined);
  return pool;
}
