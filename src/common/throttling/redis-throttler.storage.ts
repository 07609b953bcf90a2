import type { ThrottlerStorage } from '@nestjs/throttler';
import type Redis from 'ioredis';

/** What a storage answers (the library does not export the type by name). */
type ThrottlerStorageRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

// One round trip, atomic: count the hit, start the window on the first hit, block when over the limit.
const INCREMENT_SCRIPT = `
local hits = redis.call('INCR', KEYS[1])
if hits == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
local blockTtl = redis.call('PTTL', KEYS[2])
if blockTtl <= 0 and hits > tonumber(ARGV[2]) then
  redis.call('SET', KEYS[2], '1', 'PX', ARGV[3])
  blockTtl = tonumber(ARGV[3])
end
return {hits, ttl, blockTtl}
`;

type WithIncrement = Redis & {
  fdwsThrottleIncrement(...args: [string, string, number, number, number]): Promise<unknown>;
};

/** Rate-limit counters shared by every app process through Redis. */
export class RedisThrottlerStorage implements ThrottlerStorage {
  private readonly redis: WithIncrement;

  constructor(redis: Redis) {
    // A defined command runs by its SHA (EVALSHA) instead of sending the script on every request.
    if (!('fdwsThrottleIncrement' in redis)) {
      redis.defineCommand('fdwsThrottleIncrement', { numberOfKeys: 2, lua: INCREMENT_SCRIPT });
    }
    this.redis = redis as WithIncrement;
  }

  async increment(
    key: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    throttlerName: string,
  ): Promise<ThrottlerStorageRecord> {
    const base = `throttle:${throttlerName}:${key}`;
    const [hits, timeToExpire, blockTtl] = (await this.redis.fdwsThrottleIncrement(
      `${base}:hits`,
      `${base}:block`,
      ttl,
      limit,
      blockDuration > 0 ? blockDuration : ttl,
    )) as [number, number, number];
    const isBlocked = blockTtl > 0;
    return {
      totalHits: hits,
      timeToExpire: Math.max(0, Math.ceil(timeToExpire / 1000)),
      isBlocked,
      timeToBlockExpire: isBlocked ? Math.ceil(blockTtl / 1000) : 0,
    };
  }
}
