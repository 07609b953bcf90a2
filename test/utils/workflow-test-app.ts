import type { DynamicModule } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { CACHE_MANAGER } from '@nestjs/cache-manager';
import type { Cache } from 'cache-manager';
import { REDIS, type RedisClient } from '../../src/common/redis/redis.module';
import { AppModule } from '../../src/app.module';
import { loadConfig } from '../../src/config/app-config';
import { testEnv } from './test-app';
import { createTestDatabase } from './test-database';

/**
 * Compiles and initialises the application module with more modules and returns the error the boot
 * failed with (null when it booted). Unlike a failed `createTestApp`, it closes everything it
 * opened (the module, its Redis connection, the private database).
 */
export async function bootError(
  modules: NonNullable<DynamicModule['imports']>,
  env: Record<string, string> = {},
): Promise<Error | null> {
  const database = await createTestDatabase();
  const config = loadConfig(testEnv(env));
  let moduleRef: TestingModule | undefined;
  try {
    moduleRef = await Test.createTestingModule({
      imports: [AppModule.forRoot({ config, database: database.client, modules })],
    }).compile();
    await moduleRef.init();
    return null;
  } catch (error) {
    if (moduleRef) await closeConnectionsOfFailedBoot(moduleRef);
    return error as Error;
  } finally {
    await moduleRef?.close().catch(() => undefined);
    await database.close();
  }
}

/**
 * After a failed init, Nest's `close()` rejects at once (it awaits the init first) and calls no hook:
 * the connections the providers opened when they were built (Redis, the cache's Redis client) are
 * closed here, or they keep the jest worker alive.
 */
async function closeConnectionsOfFailedBoot(moduleRef: TestingModule): Promise<void> {
  const redis = moduleRef.get<RedisClient>(REDIS, { strict: false });
  await redis?.quit().catch(() => undefined);
  const cache = moduleRef.get<Cache>(CACHE_MANAGER, { strict: false });
  await cache.disconnect().catch(() => undefined);
}
