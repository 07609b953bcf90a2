import { Client, type ClientBase, Pool } from 'pg';
import type { PreparedStatementsMode } from '../config/app-config.model';

/** A node-postgres query's first argument when it is a config object (not text, not a submittable). */
function namedQueryConfig(config: unknown): config is { name: string } {
  return (
    config !== null &&
    typeof config === 'object' &&
    typeof (config as { name?: unknown }).name === 'string' &&
    // COPY streams and cursors are submittables: passed through as they are.
    typeof (config as { submit?: unknown }).submit !== 'function'
  );
}

/**
 * A node-postgres client that sends a statement unnamed unless `keepsNames`. drizzle's prepared
 * statements carry a name, and a named statement lives on one server connection: behind a pooler in
 * transaction mode (PgBouncer before 1.21, or without `max_prepared_statements`) the next transaction
 * gets another connection, where the name is unknown ("does not exist") or taken by an earlier text
 * ("already exists"). Unnamed, the statement text built once by drizzle is still reused; only
 * PostgreSQL's parse and plan are repeated (bench/README.md, "Unnamed statements and PgBouncer").
 */
class StatementNamingClient extends Client {
  keepsNames = false;

  override query(...args: unknown[]): any {
    const [config] = args;
    if (!this.keepsNames && namedQueryConfig(config)) args[0] = { ...config, name: undefined };
    return (super.query as (...rest: unknown[]) => unknown)(...args);
  }
}

/**
 * Whether a connected client talks to the PostgreSQL server itself. A pooler answers the startup
 * with a cancel key of its own (it routes cancel requests itself; PgBouncer does, tested), so the
 * process id it announces is not the one of the server process that runs the statements.
 */
export async function reachesServer(client: ClientBase): Promise<boolean> {
  const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
  const announced = (client as unknown as { processID: number | null }).processID;
  return announced !== null && rows[0]?.pid === announced;
}

/** A lost connection is reported by the query that needs it (503), not by the event. */
function ignoreConnectionLoss(): void {}

/**
 * The node-postgres pool of the service. `preparedStatements` (DATABASE_PREPARED_STATEMENTS) keeps
 * drizzle's named statements, parsed and planned once per server connection: `true` only for a
 * direct connection or a pooler in session mode (or one that tracks prepared statements); `'auto'`
 * on the connections that reach the server directly.
 */
export function createPostgresPool(options: {
  url: string;
  max: number;
  preparedStatements?: PreparedStatementsMode;
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
    ...namingFor(options.preparedStatements ?? false),
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

/**
 * How a pool's connections name statements. `'auto'`: each connection keeps names when it reaches
 * the server directly and sends every statement unnamed through a pooler, whatever its mode (a
 * session pooler would keep them, but cannot be told apart from a transaction pooler); decided once,
 * before the pool hands the connection out (a failed check fails the connection).
 */
function namingFor(mode: PreparedStatementsMode): { Client?: typeof Client; onConnect?: PoolOnConnect } {
  if (mode === true) return {};
  if (mode === false) return { Client: StatementNamingClient };
  return {
    Client: StatementNamingClient,
    onConnect: async (client) => {
      (client as StatementNamingClient).keepsNames = await reachesServer(client);
    },
  };
}

/**
 * pg-pool's `onConnect` hook: awaited before the connection is handed out, a rejection ending it
 * (@types/pg declares it as returning void).
 */
type PoolOnConnect = (client: ClientBase) => Promise<void>;
