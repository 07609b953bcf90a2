import { Global, Inject, Logger, Module, OnApplicationShutdown } from '@nestjs/common';
import type Redis from 'ioredis';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { Metrics } from '../metrics/metrics.service';

/** The shared ioredis connection, or null when REDIS_URL is unset (everything then stays in process). */
export const REDIS = Symbol('REDIS');
export type RedisClient = Redis | null;

/**
 * Redis is a cache and a counter store: a request never waits for it to come back. A command while
 * the connection is down fails at once (no offline queue) and every caller falls back (rate limits
 * in process, lookups from the database, revocations from PostgreSQL); a command Redis does not
 * answer fails after commandTimeout. The client reconnects by itself, every 2 s at the most, also
 * when Redis was not there at start.
 */
export const REDIS_CLIENT_OPTIONS = {
  lazyConnect: true,
  enableOfflineQueue: false,
  maxRetriesPerRequest: 0,
  commandTimeout: 1000,
  connectTimeout: 2000,
  retryStrategy: (attempt: number) => Math.min(attempt * 100, 2000),
} as const;

/** Whether commands can be sent now; callers skip Redis (and its error) while it is not. */
export function redisReady(redis: RedisClient): redis is Redis {
  return redis !== null && redis.status === 'ready';
}

/** One warning when Redis goes away, one line when it is back (not one per failed command). */
function reportAvailability(redis: Redis): void {
  const logger = new Logger('Redis');
  let degraded = false;
  const lost = (error?: Error) => {
    if (degraded || redis.status === 'end') return;
    degraded = true;
    logger.warn(
      `Redis is unavailable${error ? ` (${error.message})` : ''}: rate limits are counted in each process, the shared cache is skipped and token revocations are read from the database until it is back`,
    );
  };
  redis.on('error', lost);
  redis.on('close', () => lost());
  redis.on('ready', () => {
    if (!degraded) return;
    degraded = false;
    logger.log('Redis is back: rate limits and the shared cache use it again');
  });
}

class RedisLifecycle implements OnApplicationShutdown {
  constructor(@Inject(REDIS) private readonly redis: RedisClient) {}
  async onApplicationShutdown(): Promise<void> {
    if (this.redis && this.redis.status !== 'end') await this.redis.quit().catch(() => undefined);
  }
}

@Global()
@Module({
  providers: [
    {
      provide: REDIS,
      inject: [APP_CONFIG],
      useFactory: async (config: AppConfig): Promise<RedisClient> => {
        if (!config.redisUrl) return null;
        // Loaded only when configured: a process without Redis never loads the client.
        const { default: IORedis } = await import('ioredis');
        const redis = new IORedis(config.redisUrl, {
          keyPrefix: config.redisPrefix,
          ...REDIS_CLIENT_OPTIONS,
        });
        reportAvailability(redis);
        // An instance (re)started during a Redis outage starts degraded (warned once) and takes
        // Redis up once it answers: the client keeps reconnecting.
        await redis.connect().catch(() => undefined);
        return redis;
      },
    },
    RedisLifecycle,
    {
      // 1 while the connection is ready, 0 while Redis is unreachable; absent without REDIS_URL.
      provide: 'REDIS_METRICS',
      inject: [REDIS, Metrics],
      useFactory: (redis: RedisClient, metrics: Metrics) =>
        redis &&
        metrics.gauge({
          name: 'redis_up',
          help: 'Whether the Redis connection is ready (1) or not (0)',
          collect() {
            this.set(redis.status === 'ready' ? 1 : 0);
          },
        }),
    },
  ],
  exports: [REDIS],
})
export class RedisModule {}
