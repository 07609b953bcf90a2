import { Logger } from '@nestjs/common';
import Redis from 'ioredis';
import { AppCache } from '../../src/common/cache/app-cache.service';
import { REDIS, type RedisClient } from '../../src/common/redis/redis.module';
import { createConfig } from '../factories/config.factory';
import { adminToken, createUser } from '../factories/user.factory';
import { startRedisTestServer, type RedisTestServer } from '../utils/redis-test-server';
import { createTestApp, type TestApp } from '../utils/test-app';

/**
 * Redis is a cache and a counter store: stopped mid-run (and started again empty, as a Redis
 * without persistence comes back), the service keeps answering, and a token logged out before or
 * during the outage stays refused after it.
 */
describe('a Redis outage', () => {
  let redis: RedisTestServer;
  let t: TestApp;
  const warn = jest.spyOn(Logger.prototype, 'warn');
  const log = jest.spyOn(Logger.prototype, 'log');
  beforeAll(async () => {
    redis = await startRedisTestServer();
    t = await createTestApp({
      env: { REDIS_URL: redis.url, CACHE_ENABLED: 'true', THROTTLE_LIMIT: '30', WORKFLOW_WORKERS: '0' },
    });
  });
  afterAll(async () => {
    warn.mockRestore();
    log.mockRestore();
    await t?.close();
    await redis?.stop();
  });

  const me = (token: string) => t.request({ method: 'GET', url: '/auth/me', token });
  const logout = (token: string) => t.request({ method: 'POST', url: '/auth/logout', token });
  const messages = (spy: jest.SpyInstance) => spy.mock.calls.map(([message]) => String(message));

  it('answers without 500 while Redis is down, counts limits in process, and never accepts a revoked token again', async () => {
    const admin = await adminToken(t);
    const before = await createUser(t);
    const during = await createUser(t);
    expect((await me(before.token)).statusCode).toBe(200);
    expect((await logout(before.token)).statusCode).toBe(200);
    expect((await me(before.token)).statusCode).toBe(401);
    expect((await me(during.token)).statusCode).toBe(200);

    await redis.stop();
    const started = Date.now();
    const users = await t.request({ method: 'GET', url: '/api/users', token: admin });
    expect(users.statusCode).toBe(200);
    expect(Date.now() - started).toBeLessThan(1000);
    expect((await me(before.token)).statusCode).toBe(401);
    expect((await me(during.token)).statusCode).toBe(200);
    expect((await logout(during.token)).statusCode).toBe(200);
    expect((await me(during.token)).statusCode).toBe(401);
    const login = await t.request({
      method: 'POST',
      url: '/auth/login',
      payload: { email: t.config.adminEmail, password: t.config.adminPassword },
    });
    expect(login.statusCode).toBe(200);
    // THROTTLE_LIMIT=30 per route and client, counted in this process while Redis is away.
    const statuses = new Set<number>();
    for (let i = 0; i < 35; i++) statuses.add((await me(login.json().token)).statusCode);
    expect([...statuses].sort()).toEqual([200, 429]);
    expect(messages(warn).filter((message) => /Redis is unavailable/.test(message))).toHaveLength(1);

    await redis.start();
    const client = t.app.get<RedisClient>(REDIS)!;
    const deadline = Date.now() + 10_000;
    while (client.status !== 'ready' && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(client.status).toBe('ready');
    // Back on an empty Redis: both logouts hold.
    for (let i = 0; i < 3; i++) {
      const refused = await me(before.token);
      expect(refused.statusCode).toBe(401);
      expect(refused.json().code).toBe('TOKEN_INVALID');
      expect((await me(during.token)).statusCode).toBe(401);
    }
    expect((await t.request({ method: 'GET', url: '/api/users', token: admin })).statusCode).toBe(200);
    expect(messages(log).filter((message) => /Redis is back/.test(message))).toHaveLength(1);
    expect(messages(warn).filter((message) => /Redis is unavailable/.test(message))).toHaveLength(1);
  }, 60_000);

  it('an instance started while Redis is down serves from the start and takes Redis up once it answers', async () => {
    await redis.stop();
    const late = await createTestApp({
      env: { REDIS_URL: redis.url, CACHE_ENABLED: 'true', WORKFLOW_WORKERS: '0' },
      database: t.database,
    });
    try {
      const login = await late.request({
        method: 'POST',
        url: '/auth/login',
        payload: { email: late.config.adminEmail, password: late.config.adminPassword },
      });
      expect(login.statusCode).toBe(200);
      const token = login.json().token;
      const started = Date.now();
      expect((await late.request({ method: 'GET', url: '/api/users', token })).statusCode).toBe(200);
      expect((await late.request({ method: 'GET', url: '/api/users', token })).statusCode).toBe(200);
      expect(Date.now() - started).toBeLessThan(1000);

      await redis.start();
      const client = late.app.get<RedisClient>(REDIS)!;
      const deadline = Date.now() + 10_000;
      while (client.status !== 'ready' && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 50));
      expect((await late.request({ method: 'GET', url: '/api/users', token })).statusCode).toBe(200);
      // The rate-limit counters (and the shared cache) are in Redis again.
      expect(await client.dbsize()).toBeGreaterThan(0);
    } finally {
      await late.close();
    }
  }, 60_000);

  it('a Redis that kept its data: entries whose removal failed during the outage are not served after it', async () => {
    const persistent = await startRedisTestServer({ persistent: true });
    const app = await createTestApp({
      env: { REDIS_URL: persistent.url, CACHE_ENABLED: 'true', WORKFLOW_WORKERS: '0' },
      database: t.database,
    });
    try {
      const token = await adminToken(app);
      const configId = await createConfig(app, token);
      const title = async () =>
        (await app.request({ method: 'GET', url: `/api/configs/${configId}`, token })).json().title;
      expect(await title()).toBe('Order form');
      expect(await title()).toBe('Order form');

      // A large cache, so emptying it after the outage takes a while and reads fall inside it.
      // Written through a client of the test's own: the service's client gives up on a command
      // after 1 s, and 100,000 keys synced to disk at every write can take longer on a busy machine.
      const redisClient = app.app.get<RedisClient>(REDIS)!;
      const filler = new Redis(persistent.url, { keyPrefix: redisClient.options.keyPrefix });
      try {
        for (let batch = 0; batch < 10; batch++) {
          const entries = Array.from({ length: 10_000 }, (_, i) => [`cache:filler:${batch}:${i}`, '{}']);
          await filler.mset(entries.flat());
        }
      } finally {
        filler.disconnect();
      }
      await persistent.stop();
      const update = await app.request({
        method: 'PUT',
        url: `/api/configs/${configId}`,
        token,
        payload: { title: 'Changed during the outage' },
      });
      expect(update.statusCode).toBe(200);
      expect(await title()).toBe('Changed during the outage');

      await persistent.start();
      // Read throughout the return (Redis not yet reconnected, reconnected while this process
      // empties the cache, afterwards), each time as another instance that never read it would:
      // never the old title. Until the shared cache holds the new one, so the reads reached it.
      const cachedEntry = async () => {
        const keys = await redisClient.keys(`*config:${configId}:*`).catch(() => []);
        // KEYS answers whole names; GET adds the client's prefix again.
        const name = keys[0]?.slice(redisClient.options.keyPrefix?.length ?? 0);
        return keys.length === 1 ? await redisClient.get(name).catch(() => null) : null;
      };
      const deadline = Date.now() + 20_000;
      let reads = 0;
      while (!(await cachedEntry())?.includes('Changed during the outage')) {
        expect(Date.now()).toBeLessThan(deadline);
        app.app.get(AppCache).forgetEverythingKept();
        expect(await title()).toBe('Changed during the outage');
        reads++;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(reads).toBeGreaterThan(0);
      for (let i = 0; i < 3; i++) {
        app.app.get(AppCache).forgetEverythingKept();
        expect(await title()).toBe('Changed during the outage');
      }
    } finally {
      await app.close();
      await persistent.stop();
    }
  }, 60_000);
});
