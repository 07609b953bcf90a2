import { Inject, Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { REDIS, redisReady, type RedisClient } from '../../common/redis/redis.module';

/** Users whose last write this process keeps; an evicted one raises the process's floor instead. */
const MAX_KEPT_USERS = 100_000;
const KEY_PREFIX = 'replica:written:';
/**
 * The position every read of a user with no position of their own must reach. Set (once, never
 * expiring) when a reader finds it missing: Redis was emptied (restarted, flushed) or is new, and
 * the positions of writes made before that are gone; the primary's position at that moment is at or
 * past every one of them.
 */
const FLOOR_KEY = 'replica:floor';

/** Keeps the larger of the stored and the given position (16 hex digits compare as text). */
const REMEMBER_SCRIPT = `
local kept = redis.call('GET', KEYS[1])
if (not kept) or kept < ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
else
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 1`;

type RememberingRedis = NonNullable<RedisClient> & {
  fdwsRememberPosition(key: string, position: string, ttlMs: number): Promise<number>;
};

/** What the reads of a user must wait for: a position, or unknown (they go to the primary). */
export type ReadFloor = { known: true; position: bigint | null } | { known: false };

/**
 * Each user's last write position (README "Read replicas"), so a client that ignores the response
 * header still reads its own writes. Kept in Redis for every instance, and in this process too. A
 * position is kept for max(60 s, 10 x REPLICA_MAX_LAG_MS): a write older than that is on every
 * replica that takes reads at all. When Redis is configured but does not answer, a user's position
 * is unknown and the read goes to the primary; when Redis was emptied, the floor (see FLOOR_KEY)
 * stands in for the positions lost. Without REDIS_URL this process's copy is the whole truth (one
 * instance).
 */
@Injectable()
export class WritePositions {
  private readonly ttlMs: number;
  private readonly kept: LRUCache<string, bigint>;
  /** The largest position this process has had to forget (LRU eviction). */
  private evictedFloor: bigint | null = null;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(REDIS) private readonly redis: RedisClient,
  ) {
    this.ttlMs = Math.max(60_000, config.replicaMaxLagMs * 10);
    this.kept = new LRUCache<string, bigint>({
      max: MAX_KEPT_USERS,
      ttl: this.ttlMs,
      dispose: (position, _user, reason) => {
        if (reason === 'evict') this.evictedFloor = maxOf(this.evictedFloor, position);
      },
    });
    if (redis && !('fdwsRememberPosition' in redis)) {
      redis.defineCommand('fdwsRememberPosition', { numberOfKeys: 1, lua: REMEMBER_SCRIPT });
    }
  }

  /** After `userId` wrote: their reads must reach `position`. */
  async remember(userId: string, position: bigint): Promise<void> {
    const kept = this.kept.get(userId);
    if (kept === undefined || kept < position) this.kept.set(userId, position);
    if (!redisReady(this.redis)) return;
    await (this.redis as RememberingRedis)
      .fdwsRememberPosition(KEY_PREFIX + userId, sortable(position), this.ttlMs)
      .catch(() => undefined);
  }

  /**
   * The position `userId`'s reads must reach. `currentPrimaryPosition` is asked only when Redis is
   * found emptied, to set the floor.
   */
  async floorOf(userId: string | null, currentPrimaryPosition: () => Promise<bigint>): Promise<ReadFloor> {
    const local = maxOf(userId === null ? null : (this.kept.get(userId) ?? null), this.evictedFloor);
    if (this.redis === null) return { known: true, position: local };
    if (!redisReady(this.redis)) return { known: false };
    try {
      const [written, floor] = await this.redis.mget(
        userId === null ? FLOOR_KEY : KEY_PREFIX + userId,
        FLOOR_KEY,
      );
      let shared = floor === null ? null : BigInt(`0x${floor}`);
      if (floor === null) {
        const now = sortable(await currentPrimaryPosition());
        // Several instances may find it missing at once: the first floor set stays.
        await this.redis.set(FLOOR_KEY, now, 'NX');
        shared = BigInt(`0x${(await this.redis.get(FLOOR_KEY)) ?? now}`);
      }
      const own = userId === null || written === null ? null : BigInt(`0x${written}`);
      return { known: true, position: maxOf(maxOf(local, own), shared) };
    } catch {
      return { known: false };
    }
  }
}

function sortable(position: bigint): string {
  return position.toString(16).padStart(16, '0');
}

function maxOf(a: bigint | null, b: bigint | null): bigint | null {
  if (a === null) return b;
  if (b === null) return a;
  return a > b ? a : b;
}
