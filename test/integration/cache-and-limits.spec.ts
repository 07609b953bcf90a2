import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { sql } from 'drizzle-orm';
import { AppCache } from '../../src/common/cache/app-cache.service';
import { ChangeNotifications, LISTENER_NAME } from '../../src/database/change-notifications';
import { useAppSuite } from '../utils/app-suite';
import { createTestApp, type TestApp } from '../utils/test-app';
import { createTestDatabase } from '../utils/test-database';
import { onPostgres } from '../utils/configurations';
import { untilTrue } from '../utils/until';

describe('AppCache', () => {
  let t: TestApp;
  useAppSuite((suite) => ({ t } = suite), { env: { CACHE_ENABLED: 'true' }, admin: false, seed: 'once' });

  it('loads once, serves from the cache until deleted, and caches null too', async () => {
    const cache = t.app.get(AppCache);
    let loads = 0;
    const loader = async () => ({ n: ++loads });
    expect(await cache.getOrLoad('k1', 60, loader)).toEqual({ n: 1 });
    expect(await cache.getOrLoad('k1', 60, loader)).toEqual({ n: 1 });
    await cache.delete('k1');
    expect(await cache.getOrLoad('k1', 60, loader)).toEqual({ n: 2 });
    let nullLoads = 0;
    const nullLoader = async () => {
      nullLoads++;
      return null;
    };
    expect(await cache.getOrLoad('k2', 60, nullLoader)).toBeNull();
    expect(await cache.getOrLoad('k2', 60, nullLoader)).toBeNull();
    expect(nullLoads).toBe(1);
  });

  it('without CACHE_ENABLED keeps values in process, and a delete on one instance reaches the other at once', async () => {
    const first = await createTestApp({ env: { CACHE_ENABLED: 'false' }, database: t.database });
    const second = await createTestApp({ env: { CACHE_ENABLED: 'false' }, database: t.database });
    try {
      let loads = 0;
      const load = async () => ++loads;
      expect(await first.app.get(AppCache).getOrLoad('k3', 60, load)).toBe(1);
      expect(await first.app.get(AppCache).getOrLoad('k3', 60, load)).toBe(1);
      expect(await second.app.get(AppCache).getOrLoad('k3', 60, load)).toBe(2);
      await first.app.get(AppCache).delete('k3');
      // The notice travels through the database; the second instance must have dropped its value.
      await waitFor(async () => (await second.app.get(AppCache).getOrLoad('k3', 60, load)) === 3);
      expect(await first.app.get(AppCache).getOrLoad('k3', 60, load)).toBe(4);
    } finally {
      await first.close();
      await second.close();
    }
  });

  it('does not keep a value loaded while the same key was deleted (it may be the old one)', async () => {
    const cache = t.app.get(AppCache);
    let release!: () => void;
    const slowLoad = () =>
      new Promise<string>((resolve) => {
        release = () => resolve('old');
      });
    const pending = cache.getOrLoad('k4', 60, slowLoad);
    await new Promise((resolve) => setImmediate(resolve));
    await cache.delete('k4');
    release();
    expect(await pending).toBe('old');
    expect(await cache.getOrLoad('k4', 60, async () => 'new')).toBe('new');
  });

  it('hands out frozen values, so no caller can change what the next one gets', async () => {
    const cache = t.app.get(AppCache);
    const value = await cache.getOrLoad('k5', 60, async () => ({ nested: { n: 1 } }));
    expect(Object.isFrozen(value)).toBe(true);
    expect(Object.isFrozen(value.nested)).toBe(true);

    // A value not kept (a deletion came while it loaded) is handed out frozen all the same, as is
    // one loaded while the announcement channel is down: a caller changing it would otherwise fail
    // only some of the time.
    let release!: () => void;
    const pending = cache.getOrLoad(
      'k7',
      60,
      () =>
        new Promise<{ nested: { n: number } }>((resolve) => {
          release = () => resolve({ nested: { n: 2 } });
        }),
    );
    await new Promise((resolve) => setImmediate(resolve));
    await cache.delete('k7');
    release();
    const notKept = await pending;
    expect(Object.isFrozen(notKept)).toBe(true);
    expect(Object.isFrozen(notKept.nested)).toBe(true);
  });
});

onPostgres('process memory while the notification connection is down (PostgreSQL)', () => {
  it('keeps nothing while it is down and starts keeping again once it is back', async () => {
    const t = await createTestApp({ env: { CACHE_ENABLED: 'false' } });
    try {
      const cache = t.app.get(AppCache);
      const notifications = t.app.get(ChangeNotifications);
      await waitFor(async () => notifications.connected);
      let loads = 0;
      const load = async () => ++loads;
      await cache.getOrLoad('k6', 60, load);
      expect(await cache.getOrLoad('k6', 60, load)).toBe(1);

      await t.database.client.db.execute(
        sql`select pg_terminate_backend(pid) from pg_stat_activity where application_name = ${LISTENER_NAME} and datname = current_database()`,
      );
      await waitFor(async () => !notifications.connected);
      // Notices of this time are lost: nothing is served from memory, nothing is kept.
      expect(await cache.getOrLoad('k6', 60, load)).toBe(2);
      expect(await cache.getOrLoad('k6', 60, load)).toBe(3);

      await waitFor(async () => notifications.connected, 10_000);
      expect(await cache.getOrLoad('k6', 60, load)).toBe(4);
      expect(await cache.getOrLoad('k6', 60, load)).toBe(4);
    } finally {
      await t.close();
    }
  });
});

const waitFor = (condition: () => Promise<boolean>, timeoutMs = 5000) =>
  untilTrue(condition, 'the condition', { timeoutMs, everyMs: 20 });

const withRedis = process.env.TEST_REDIS_URL ? describe : describe.skip;
withRedis('shared state across two app instances through Redis', () => {
  it('counts rate limits across instances and shares cache entries', async () => {
    const database = await createTestDatabase();
    const env = { THROTTLE_AUTH_LIMIT: '10', CACHE_ENABLED: 'true', REDIS_PREFIX: `shared-${Date.now()}:` };
    const first = await createTestApp({ env, database });
    const second = await createTestApp({ env, database });
    try {
      const login = (t: TestApp) =>
        t.request({
          method: 'POST',
          url: '/auth/login',
          payload: { email: 'x@example.com', password: 'wrong-pass' },
        });
      for (let i = 0; i < 5; i++) {
        expect((await login(first)).statusCode).toBe(401);
        expect((await login(second)).statusCode).toBe(401);
      }
      expect((await login(first)).statusCode).toBe(429);
      expect((await login(second)).statusCode).toBe(429);

      await first.app.get(AppCache).getOrLoad('shared-key', 60, async () => 'from-first');
      expect(await second.app.get(AppCache).getOrLoad('shared-key', 60, async () => 'from-second')).toBe(
        'from-first',
      );
    } finally {
      await first.close();
      await second.close();
      await database.close();
    }
  });

  it('writes every Redis key (cache, rate limits, revoked tokens) with REDIS_PREFIX exactly once', async () => {
    const prefix = `keys-${randomBytes(4).toString('hex')}:`;
    const t = await createTestApp({ env: { CACHE_ENABLED: 'true', REDIS_PREFIX: prefix } });
    const raw = new Redis(process.env.TEST_REDIS_URL!);
    try {
      await t.app.get(AppCache).getOrLoad('config:abc', 60, async () => 'cached');
      const login = await t.request({
        method: 'POST',
        url: '/auth/login',
        payload: { email: 'admin@example.com', password: 'admin12345' },
      });
      expect(login.statusCode).toBe(200);
      const token = login.json().token;
      expect((await t.request({ method: 'POST', url: '/auth/logout', token })).statusCode).toBe(200);

      const keys: string[] = [];
      let cursor = '0';
      do {
        const [next, batch] = await raw.scan(cursor, 'MATCH', `*${prefix}*`, 'COUNT', 1000);
        keys.push(...batch);
        cursor = next;
      } while (cursor !== '0');
      expect(keys).toContain(`${prefix}cache:config:abc`);
      expect(keys.some((key) => key.startsWith(`${prefix}throttle:`))).toBe(true);
      expect(keys.some((key) => key.startsWith(`${prefix}revoked:`))).toBe(true);
      for (const key of keys) {
        expect(key.startsWith(prefix)).toBe(true);
        expect(key.slice(prefix.length)).not.toContain(prefix);
        expect(key).not.toContain('::');
      }
    } finally {
      raw.disconnect();
      await t.close();
    }
  });
});
