import { Client } from 'pg';
import { ReadReplicas, type ReplicaStatus } from '../../src/database/replicas/read-replicas';
import { parseWalPosition } from '../../src/database/replicas/wal-position';
import { createConfig } from '../factories/config.factory';
import { createRecord } from '../factories/record.factory';
import { adminToken, createUser, type TestUser } from '../factories/user.factory';
import { REDIS, type RedisClient } from '../../src/common/redis/redis.module';
import { startRedisTestServer } from '../utils/redis-test-server';
import { expectError } from '../utils/api-error';
import { relayTo } from '../utils/replica-relay';
import { withDatabase } from '../utils/snapshot';
import { createTestApp, type TestApp } from '../utils/test-app';
import { createTestDatabase, type TestDatabase } from '../utils/test-database';
import { untilTrue } from '../utils/until';

/**
 * Reads on a real streaming replica of the test server (TEST_REPLICA_URL: scripts/replica-start, as
 * CI runs it). One file, run alone against its replica: pausing its replay affects everyone using
 * it, and every test resumes it, also when it fails.
 */
const replicaServer = process.env.TEST_REPLICA_URL;
const onReplica = replicaServer && process.env.TEST_DATABASE_URL ? describe : describe.skip;

const FREE_FORM = { schema: null, validationRules: [], computedRules: [] };
const POSITION = /^[0-9A-F]{1,8}\/[0-9A-F]{1,8}$/;

onReplica('reads on a streaming replica, never a stale read of your own write', () => {
  let database: TestDatabase;
  let replicaUrl: string;
  let replicaAdmin: Client;
  const apps: TestApp[] = [];

  const sql = async (text: string) => (await replicaAdmin.query(text)).rows[0];
  const pause = async () => {
    await sql('select pg_wal_replay_pause()');
    await until(async () => (await sql('select pg_get_wal_replay_pause_state() as s')).s === 'paused');
  };
  const resume = () => sql('select pg_wal_replay_resume()');

  async function app(env: Record<string, string>, url = replicaUrl): Promise<TestApp> {
    const t = await createTestApp({
      database,
      env: {
        DATABASE_URL: database.url!,
        DATABASE_REPLICA_URLS: url,
        REPLICA_POLL_MS: '100',
        ...env,
      },
    });
    apps.push(t);
    return t;
  }
  const replicaOf = (t: TestApp) => t.app.get(ReadReplicas).replicas[0];
  const statusBecomes = (t: TestApp, status: ReplicaStatus) =>
    until(async () => replicaOf(t).status === status);
  /** Until the replica has replayed everything the primary had when this was called. */
  const caughtUp = async (t: TestApp) => {
    const now = await t.app.get(ReadReplicas).primaryPosition();
    await until(async () => replicaOf(t).status === 'ready' && (replicaOf(t).replayed ?? 0n) >= now);
  };
  /** Routed reads so far, by the database that answered them. */
  async function readsBy(t: TestApp): Promise<Record<string, number>> {
    const text = (await t.request({ method: 'GET', url: '/metrics' })).body;
    const counts: Record<string, number> = {};
    for (const match of text.matchAll(/^fdws_db_routed_reads_total\{target="([^"]+)"\} (\d+)$/gm))
      counts[match[1]] = Number(match[2]);
    return counts;
  }

  /** Made on `t`: the admin's token, a second admin who only reads (the viewer), and a free-form form. */
  async function seed(t: TestApp) {
    const admin = await adminToken(t);
    const viewer = await createUser(t, { role: 'admin' });
    const configId = await createConfig(t, admin, FREE_FORM);
    return { admin, viewer, configId };
  }
  /**
   * The viewer's first read through `reader`, which sets the floor of readers with no position of
   * their own (a Redis emptied or new), and the replica caught up with it.
   */
  async function firstRead(reader: TestApp, viewer: TestUser, configId: string) {
    await reader.request({ method: 'GET', url: `/api/data/${configId}`, token: viewer.token });
    await caughtUp(reader);
  }

  beforeAll(async () => {
    database = await createTestDatabase();
    const name = new URL(database.directUrl!).pathname.slice(1);
    replicaUrl = withDatabase(replicaServer!, name);
    replicaAdmin = new Client({ connectionString: replicaServer });
    await replicaAdmin.connect();
    await resume();
    // The clone of the template reaches the replica by replication.
    await until(async () => {
      const probe = new Client({ connectionString: replicaUrl });
      try {
        await probe.connect();
        return true;
      } catch {
        return false;
      } finally {
        await probe.end().catch(() => undefined);
      }
    });
  });
  afterEach(async () => {
    await resume();
  });
  afterAll(async () => {
    await resume().catch(() => undefined);
    for (const t of apps) await t.close();
    await replicaAdmin?.end();
    await database?.close();
  });

  it('1,000 create-then-list pairs with replay paused: every record seen; a reader with no write reads the replica', async () => {
    // A generous lag bound: the paused replica keeps taking the reads it may take.
    const t = await app({ REPLICA_MAX_LAG_MS: '600000' });
    // A second instance: without a shared store of positions, only the echoed header protects.
    const other = await app({ REPLICA_MAX_LAG_MS: '600000', REDIS_URL: '' });
    const { admin, viewer, configId } = await seed(t);
    await statusBecomes(t, 'ready');
    await statusBecomes(other, 'ready');
    // The replica reaches the floor the viewer's first read sets before it is paused.
    await firstRead(t, viewer, configId);
    await pause();

    const before = await readsBy(t);
    let last = '';
    for (let n = 0; n < 1000; n++) {
      const created = await t.request({
        method: 'POST',
        url: `/api/data/${configId}`,
        token: admin,
        payload: { n },
      });
      expect(created.statusCode).toBe(201);
      const position = String(created.headers['x-database-position']);
      expect(position).toMatch(POSITION);
      last = position;
      // Even pairs: the same instance, the client ignoring the header. Odd: another instance, the
      // client sending the position back.
      const reader = n % 2 === 0 ? t : other;
      const listed = await reader.request({
        method: 'GET',
        url: `/api/data/${configId}?filters=${encodeURIComponent(JSON.stringify({ n }))}`,
        token: admin,
        headers: n % 2 === 0 ? {} : { 'x-database-position': position },
      });
      expect(listed.statusCode).toBe(200);
      expect(listed.json().data.map((record: { id: string }) => record.id)).toEqual([created.json().data.id]);
    }
    const after = await readsBy(t);
    expect((after.primary ?? 0) - (before.primary ?? 0)).toBe(500);

    // Someone who wrote nothing reads the replica, paused before the first record.
    const stale = await t.request({ method: 'GET', url: `/api/data/${configId}`, token: viewer.token });
    expect(stale.statusCode).toBe(200);
    expect(stale.json().total).toBe(0);
    expect((await readsBy(t)).replica1).toBe((after.replica1 ?? 0) + 1);

    // Replay resumed and caught up: the writer's reads go to the replica, which has everything.
    await resume();
    await until(async () => (replicaOf(t).replayed ?? 0n) >= parseWalPosition(last)!);
    const caughtUpBefore = (await readsBy(t)).replica1 ?? 0;
    const all = await t.request({ method: 'GET', url: `/api/data/${configId}?limit=1`, token: admin });
    expect(all.statusCode).toBe(200);
    expect(all.json().total).toBe(1000);
    expect((await readsBy(t)).replica1).toBe(caughtUpBefore + 1);
  }, 600_000);

  it('a replica stopped mid-load: no 5xx, reads go to the primary, and it is taken back once it answers', async () => {
    const relay = await relayTo(Number(new URL(replicaServer!).port || 5432));
    try {
      const relayed = new URL(replicaUrl);
      relayed.port = String(relay.port);
      const t = await app({ REPLICA_MAX_LAG_MS: '5000' }, relayed.toString());
      const { admin, viewer, configId } = await seed(t);
      await statusBecomes(t, 'ready');
      await firstRead(t, viewer, configId);
      const statuses: number[] = [];
      /** The status, or -1 for an answer cut short (a streamed export whose replica went away). */
      const send = (options: Parameters<TestApp['request']>[0]) =>
        t.request(options).then(
          (response) => response.statusCode,
          () => -1,
        );
      const load = async (rounds: number) => {
        for (let n = 0; n < rounds; n++) {
          statuses.push(
            ...(await Promise.all([
              send({ method: 'POST', url: `/api/data/${configId}`, token: admin, payload: { n } }),
              send({ method: 'GET', url: `/api/data/${configId}?limit=5`, token: viewer.token }),
              send({ method: 'GET', url: `/api/data/${configId}/export?format=csv`, token: viewer.token }),
              send({ method: 'GET', url: `/api/data/${configId}/stats`, token: viewer.token }),
            ])),
          );
        }
      };
      const loading = load(60);
      await new Promise((resolve) => setTimeout(resolve, 300));
      await relay.takeAway();
      await loading;
      await statusBecomes(t, 'down');
      await load(10);
      expect(statuses.filter((status) => status >= 500)).toEqual([]);
      expect(statuses.filter((status) => status !== 200 && status !== 201).length).toBeLessThanOrEqual(1);

      await relay.bringBack();
      await statusBecomes(t, 'ready');
      const before = (await readsBy(t)).replica1 ?? 0;
      const listed = await t.request({ method: 'GET', url: `/api/data/${configId}`, token: viewer.token });
      expect(listed.statusCode).toBe(200);
      expect((await readsBy(t)).replica1).toBe(before + 1);
    } finally {
      await relay.close();
    }
  }, 300_000);

  it('a replica further behind than REPLICA_MAX_LAG_MS gets no reads, and is taken back when it has caught up', async () => {
    const t = await app({ REPLICA_MAX_LAG_MS: '500' });
    const { admin, viewer, configId } = await seed(t);
    await firstRead(t, viewer, configId);
    await pause();
    await createRecord(t, admin, configId, { n: 1 });
    await statusBecomes(t, 'lagging');

    const before = await readsBy(t);
    const listed = await t.request({ method: 'GET', url: `/api/data/${configId}`, token: viewer.token });
    expect(listed.statusCode).toBe(200);
    expect(listed.json().total).toBe(1);
    const after = await readsBy(t);
    expect(after.primary).toBe(before.primary + 1);
    expect(after.replica1).toBe(before.replica1);

    await resume();
    await caughtUp(t);
    const back = await t.request({ method: 'GET', url: `/api/data/${configId}`, token: viewer.token });
    expect(back.json().total).toBe(1);
    expect((await readsBy(t)).replica1).toBe(after.replica1 + 1);
  }, 120_000);

  it('several instances, Redis stopped and restarted empty: a writer reading on another instance never reads a stale replica', async () => {
    const redis = await startRedisTestServer();
    try {
      const shared = { REPLICA_MAX_LAG_MS: '600000', REDIS_URL: redis.url, REDIS_PREFIX: 'replicas-shared:' };
      const a = await app(shared);
      const b = await app(shared);
      const { admin, viewer, configId } = await seed(a);
      await statusBecomes(b, 'ready');
      await firstRead(b, viewer, configId);
      await pause();
      await createRecord(a, admin, configId, { n: 1 });
      /** The admin's list on the other instance, without the header: always the new record. */
      const readOnB = async () => {
        const listed = await b.request({ method: 'GET', url: `/api/data/${configId}`, token: admin });
        expect(listed.statusCode).toBe(200);
        expect(listed.json().total).toBe(1);
      };
      const primaryReads = async () => (await readsBy(b)).primary;

      // The position written by A, read from Redis by B.
      let before = await primaryReads();
      await readOnB();
      expect(await primaryReads()).toBe(before + 1);

      // Redis away: positions unknown, reads on the primary.
      await redis.stop();
      await until(async () => b.app.get<RedisClient>(REDIS)!.status !== 'ready');
      before = await primaryReads();
      await readOnB();
      expect(await primaryReads()).toBe(before + 1);

      // Back empty: the position is lost, the floor (the primary's position now) stands in for it.
      await redis.start();
      await until(async () => b.app.get<RedisClient>(REDIS)!.status === 'ready');
      before = await primaryReads();
      await readOnB();
      expect(await primaryReads()).toBe(before + 1);

      // Replay resumed: once the replica is past the floor, the read is the replica's, and whole.
      await resume();
      await caughtUp(b);
      const replicaBefore = (await readsBy(b)).replica1;
      await readOnB();
      expect((await readsBy(b)).replica1).toBe(replicaBefore + 1);
    } finally {
      await redis.stop();
    }
  }, 120_000);

  it('a position sent back that is not one is a 400', async () => {
    const t = apps[0];
    const admin = await adminToken(t);
    const configId = await createConfig(t, admin, FREE_FORM);
    const response = await t.request({
      method: 'GET',
      url: `/api/data/${configId}`,
      token: admin,
      headers: { 'x-database-position': 'not-a-position' },
    });
    expectError(response, 400, {
      error:
        'The X-Database-Position header must be a WAL position as a write answered it (like 16/B374D848).',
      code: 'INVALID_DATABASE_POSITION',
    });
  });
});

/** Waits (up to 60 s) until `condition` holds; polls every 50 ms. */
const until = (condition: () => Promise<boolean>, timeoutMs = 60_000) =>
  untilTrue(condition, 'the condition', { timeoutMs });
