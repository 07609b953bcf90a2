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

/** A lost connection is reported by the query that needs it (503), not by the event. */
function ignoreConnectionLoss(): void {}

/**
 * The node-postgres pool of the service. `preparedStatements` (DATABASE_PREPARED_STATEMENTS) keeps
 * drizzle's named statements, parsed and planned once per server connection: only for a direct
 * connection or a pooler in session mode (or one that tracks prepared statements).
 */
export function createPostgresPool(options: {
  url: string;
  max: number;
  preparedStatements?: boolean;
  /** Give up connecting after this long (a replica that hangs must not hold a request). */
  connectTimeoutMs?: number;
  /** TCP keepalive probes after this long idle, so a connection to a vanished host ends. */
  keepAliveAfterMs?: number;
}): Pool {
  const pool = new Pool({
    connectionString: options.url,
    max: options.max,
    ...(options.connectTimeoutMs ? { connectionTimeoutMillis: options.connectTimeoutMs } : {}),
    ...(options.keepAliveAfterMs
      ? { keepAlive: true, keepAliveInitialDelayMillis: options.keepAliveAfterMs }
      : {}),
    ...(options.preparedStatements ? {} : { Client: UnnamedStatementClient }),
  });
  // node-postgres listens for a client's 'error' only while the client is idle in the pool: one lost
  // while checked out (inside a transaction, held by a COPY stream or a cursor) emitted an unhandled
  // 'error' and ended the process. Every client gets a listener of its own for its whole life. The
  // loss itself reaches whoever holds the client: the statement in flight rejects, the next one is
  // refused ("not queryable"), and the pool drops the client when it comes back.
  pool.on('connect', (client) => client.on('error', ignoreConnectionLoss));
  // An idle client losing its server: the pool drops it, the next query reports the outage.
  pool.on('error', ignoreConnectionLoss);
  return pool;
}
