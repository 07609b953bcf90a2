import { createPostgresPool } from '../../src/database/postgres-pool';
import { DatabaseClient } from '../../src/database/database-client';
import { relayTo } from './replica-relay';
import { createTestDatabase, type TestDatabase } from './test-database';

/**
 * A real database whose connection can be cut during a test: PGlite is closed; a PostgreSQL server
 * is reached through a TCP relay on 127.0.0.1 that is shut down, so the pool sees refused connections.
 */
export async function databaseThatCanGoAway(): Promise<{
  database: TestDatabase;
  takeAway(): Promise<void>;
  /** PostgreSQL only (a closed PGlite cannot reopen under the same client): the relay listens again. */
  bringBack: (() => Promise<void>) | null;
  dispose(): Promise<void>;
}> {
  const real = await createTestDatabase();
  if (!real.url) {
    return {
      database: real,
      takeAway: async () => real.client.pglite?.close(),
      bringBack: null,
      dispose: () => real.close(),
    };
  }
  const target = new URL(real.url);
  const relay = await relayTo(Number(target.port || 5432), target.hostname);
  const relayed = new URL(real.url);
  relayed.hostname = '127.0.0.1';
  relayed.port = String(relay.port);
  const pool = createPostgresPool({ url: relayed.toString(), max: 4 });
  const database: TestDatabase = {
    ...real,
    client: DatabaseClient.forPool(pool, false),
    url: relayed.toString(),
  };
  return {
    database,
    takeAway: relay.takeAway,
    bringBack: relay.bringBack,
    dispose: async () => {
      await pool.end().catch(() => undefined);
      // Brought back, the relay listens again: closed here, or it keeps the jest worker alive.
      await relay.close();
      await real.close();
    },
  };
}
