import { createServer, connect, type Socket } from 'node:net';
import { createPostgresPool } from '../../src/database/postgres-pool';
import { DatabaseClient } from '../../src/database/database-client';
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
  const sockets = new Set<Socket>();
  const relay = createServer((incoming) => {
    const outgoing = connect(Number(target.port || 5432), target.hostname);
    for (const socket of [incoming, outgoing]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    incoming.pipe(outgoing).pipe(incoming);
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  const relayPort = (relay.address() as { port: number }).port;
  const relayed = new URL(real.url);
  relayed.hostname = '127.0.0.1';
  relayed.port = String(relayPort);
  const pool = createPostgresPool({ url: relayed.toString(), max: 4 });
  const database: TestDatabase = {
    ...real,
    client: DatabaseClient.forPool(pool, false),
    url: relayed.toString(),
  };
  const closeRelay = () =>
    new Promise<void>((resolve) => {
      if (!relay.listening) return resolve();
      relay.close(() => resolve());
      for (const socket of sockets) socket.destroy();
    });
  return {
    database,
    takeAway: closeRelay,
    bringBack: () => new Promise<void>((resolve) => relay.listen(relayPort, '127.0.0.1', resolve)),
    dispose: async () => {
      await pool.end().catch(() => undefined);
      // Brought back, the relay listens again: closed here, or it keeps the jest worker alive.
      await closeRelay();
      await real.close();
    },
  };
}
