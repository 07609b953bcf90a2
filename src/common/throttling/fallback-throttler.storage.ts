import type { ThrottlerStorage } from '@nestjs/throttler';
import type Redis from 'ioredis';
import { redisReady } from '../redis/redis.module';
import { MemoryThrottlerStorage } from './memory-throttler.storage';
import { RedisThrottlerStorage } from './redis-throttler.storage';

/**
 * Rate limits in Redis (shared by every process) while it answers, counted in this process while
 * it does not: a Redis outage lowers the precision of the limits (each process counts its own
 * share), never the availability of the service. Redis is used again once the client is ready.
 */
export class FallbackThrottlerStorage implements ThrottlerStorage {
  private readonly shared: RedisThrottlerStorage;
  private readonly local = new MemoryThrottlerStorage();

  constructor(private readonly redis: Redis) {
    this.shared = new RedisThrottlerStorage(redis);
  }

  async increment(
    ...args: Parameters<ThrottlerStorage['increment']>
  ): ReturnType<ThrottlerStorage['increment']> {
    if (!redisReady(this.redis)) return this.local.increment(...args);
    try {
      return await this.shared.increment(...args);
    } catch {
      return this.local.increment(...args);
    }
  }
}
