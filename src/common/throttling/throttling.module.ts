import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import {
  getOptionsToken,
  getStorageToken,
  ThrottlerGuard,
  ThrottlerModule,
  type ThrottlerModuleOptions,
  type ThrottlerStorage,
} from '@nestjs/throttler';
import { MemoizedReflector } from '../http/memoized-reflector';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { REDIS, type RedisClient } from '../redis/redis.module';
import { AUTH_RATE_LIMITED } from './auth-rate-limit.decorator';
import { MemoryThrottlerStorage } from './memory-throttler.storage';
import { FallbackThrottlerStorage } from './fallback-throttler.storage';

/** Route metadata, read on every request (see MemoizedReflector). */
const routes = new MemoizedReflector();

/**
 * Two throttlers per client IP: `default` on every route, `auth` only on routes marked
 * @AuthRateLimit(). Health checks opt out with @SkipThrottle().
 */
@Module({
  imports: [
    ThrottlerModule.forRootAsync({
      inject: [APP_CONFIG, REDIS],
      useFactory: (config: AppConfig, redis: RedisClient) => ({
        throttlers: [
          { name: 'default', ttl: config.throttleTtlMs, limit: config.throttleLimit },
          {
            name: 'auth',
            ttl: config.throttleTtlMs,
            limit: config.throttleAuthLimit,
            skipIf: (context) =>
              !routes.getAllAndOverride<boolean>(AUTH_RATE_LIMITED, [
                context.getHandler(),
                context.getClass(),
              ]),
          },
        ],
        // The route and the client as they are: the library hashes them (SHA-256) on every request,
        // for keys that are short already (a class and handler name, an address).
        generateKey: (context, tracker) =>
          `${context.getClass().name}.${context.getHandler().name}:${tracker}`,
        storage: redis ? new FallbackThrottlerStorage(redis) : new MemoryThrottlerStorage(),
      }),
    }),
  ],
  providers: [
    {
      provide: APP_GUARD,
      // The library's guard reads seven metadata keys per request: read through a memoized Reflector.
      inject: [getOptionsToken(), getStorageToken()],
      useFactory: (options: ThrottlerModuleOptions, storage: ThrottlerStorage) =>
        new ThrottlerGuard(options, storage, routes),
    },
  ],
})
export class ThrottlingModule {}
