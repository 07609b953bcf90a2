import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { AppCache } from '../../src/common/cache/app-cache.service';
import { createTestApp, type TestApp } from '../utils/test-app';
import { createTestDatabase } from '../utils/test-database';

describe('AppCache', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { CACHE_ENABLED: 'true' } });
  });
  afterAll(() => t.close());

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

  it('does nothing when CACHE_ENABLED is false', async () => {
    const off = await createTestApp({ env: { CACHE_ENABLED: 'false' }, database: t.database });
    try {
      let loads = 0;
      const cache = off.app.get(AppCache);
      await cache.getOrLoad('k3', 60, async () => ++loads);
      await cache.getOrLoad('k3', 60, async () => ++loads);
      expect(loads).toBe(2);
    } finally {
      await off.close();
    }
  });
});

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
