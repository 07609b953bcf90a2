import type { Readable } from 'node:stream';
import { sql } from 'drizzle-orm';
import type { Pool } from 'pg';
import { isDatabaseUnavailable } from '../../src/common/errors/database-unavailable';
import { createPostgresPool } from '../../src/database/postgres-pool';
import { SnapshotReader } from '../../src/database/snapshot-reader';
import { ownPostgresServer } from '../utils/configurations';
import { PostgresTestCluster } from '../utils/postgres-test-cluster';

/**
 * The service's connections to PostgreSQL at the moment the server goes away (`pg_ctl restart -m
 * immediate`, a crash: every backend killed at once), on a server of this suite's own: directly and
 * through PgBouncer in transaction mode. node-postgres attaches an 'error' listener only to idle
 * clients; before the pool gave every client one of its own, a client checked out at that moment
 * emitted an unhandled 'error' and ended the process (jest reports it as this test's failure).
 */
ownPostgresServer('database faults: each kind of connection when PostgreSQL restarts', () => {
  let cluster: PostgresTestCluster;
  beforeAll(async () => {
    cluster = await PostgresTestCluster.create();
    await cluster.startPgBouncer();
  });
  afterAll(async () => {
    await cluster?.destroy();
  });

  for (const route of ['direct', 'through PgBouncer'] as const) {
    describe(route, () => {
      let pool: Pool;
      beforeEach(() => {
        pool = createPostgresPool({ url: cluster.url('postgres', route !== 'direct'), max: 4 });
      });
      afterEach(async () => {
        await pool.end();
      });

      it('a client checked out inside a transaction, between two statements', async () => {
        const client = await pool.connect();
        await client.query('begin');
        await client.query('select 1');
        await cluster.restart('immediate');
        // The connection's loss arrives as an event while nobody waits on it.
        await settle();
        const next = await client.query('select 2').then(
          () => null,
          (error: unknown) => error,
        );
        expect(isDatabaseUnavailable(next)).toBe(true);
        client.release(next as Error);
        await expectAnswersWithin(pool, 1000);
      });

      it('a statement in flight', async () => {
        const running = pool.query('select pg_sleep(5)').then(
          () => null,
          (error: unknown) => error,
        );
        await new Promise((resolve) => setTimeout(resolve, 200));
        await cluster.restart('immediate');
        expect(isDatabaseUnavailable(await running)).toBe(true);
        await expectAnswersWithin(pool, 1000);
      });

      it('an idle pool', async () => {
        await Promise.all([pool.query('select 1'), pool.query('select 1'), pool.query('select 1')]);
        await cluster.restart('immediate');
        await settle();
        await expectAnswersWithin(pool, 1000);
      });

      it('a COPY stream its reader has paused', async () => {
        const reader = await SnapshotReader.open(pool);
        const rows: Readable = await reader.copyCsv(
          sql`select g, repeat('x', 200) from generate_series(1, 200000) as g`,
        );
        const failed = new Promise<unknown>((resolve) => {
          rows.once('error', resolve);
          rows.once('end', () => resolve(null));
        });
        // Not read: backpressure holds the COPY, and the connection, open.
        await new Promise((resolve) => setTimeout(resolve, 100));
        await cluster.restart('immediate');
        rows.resume();
        expect(isDatabaseUnavailable(await failed)).toBe(true);
        await expectAnswersWithin(pool, 1000);
      });
    });
  }
});

/** Lets the socket events of a dropped connection arrive. */
function settle(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 300));
}

async function expectAnswersWithin(pool: Pool, ms: number): Promise<void> {
  const started = Date.now();
  for (;;) {
    try {
      expect((await pool.query('select 1 as one')).rows).toEqual([{ one: 1 }]);
      return;
    } catch (error) {
      if (Date.now() - started > ms) throw error;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}
