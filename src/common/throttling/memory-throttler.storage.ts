import type { ThrottlerStorage } from '@nestjs/throttler';
import { LRUCache } from 'lru-cache';

/** What a storage answers (the library does not export the type by name). */
type ThrottlerStorageRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

interface Window {
  hits: number;
  endsAt: number;
  blockedUntil: number;
}

/** Most clients one process counts at once; the least recently seen are forgotten first. */
const MAX_CLIENTS = 100_000;

/**
 * Rate-limit counters of one process (no Redis): the same fixed window as the Redis storage. The
 * library's own in-memory storage keeps one timestamp per hit and scans them all on every request,
 * which costs more than the rest of a request once a limit is in the thousands; this is O(1), and
 * the number of clients kept is bounded, so a flood of addresses cannot grow it without end.
 */
export class MemoryThrottlerStorage implements ThrottlerStorage {
  private readonly windows = new LRUCache<string, Window>({ max: MAX_CLIENTS });

  // The interface is asynchronous; the answer is not.
  async increment(
    key: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    throttlerName: string,
  ): Promise<ThrottlerStorageRecord> {
    const now = Date.now();
    const id = `${throttlerName}:${key}`;
    let window = this.windows.get(id);
    if (window === undefined || window.endsAt <= now) {
      window = { hits: 0, endsAt: now + ttl, blockedUntil: window?.blockedUntil ?? 0 };
      this.windows.set(id, window);
    }
    window.hits++;
    if (window.blockedUntil <= now && window.hits > limit) {
      window.blockedUntil = now + (blockDuration > 0 ? blockDuration : ttl);
    }
    const isBlocked = window.blockedUntil > now;
    return {
      totalHits: window.hits,
      timeToExpire: Math.max(0, Math.ceil((window.endsAt - now) / 1000)),
      isBlocked,
      timeToBlockExpire: isBlocked ? Math.ceil((window.blockedUntil - now) / 1000) : 0,
    };
  }
}
