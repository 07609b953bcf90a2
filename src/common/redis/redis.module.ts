import { Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import type Redis from 'ioredis';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { Metrics } from '../metrics/metrics.service';

/** The shared ioredis connection, or null when REDIS_URL is unset (everything then stays in process). */
export const REDIS = Symbol('REDIS');
export type RedisClient = Redis | null;

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
          lazyConnect: true,
          maxRetriesPerRequest: 2,
        });
        await redis.connect();
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
