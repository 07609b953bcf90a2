import { LRUCache } from 'lru-cache';

/** Most entries one process keeps; the least recently used go first. */
const MAX_ENTRIES = 20_000;

/**
 * Values of hot lookups kept in this process, as given (AppCache freezes every value it hands out,
 * kept or not). `epoch` moves on every invalidation: a value loaded while an invalidation happened
 * is not kept, because it may be the old one.
 */
export class LocalMemo {
  private readonly entries = new LRUCache<string, { v: unknown }>({ max: MAX_ENTRIES });
  private currentEpoch = 0;

  get epoch(): number {
    return this.currentEpoch;
  }

  get(key: string): { v: unknown } | undefined {
    return this.entries.get(key);
  }

  /** Keeps `value` for `ttlMs` unless something was invalidated since `epoch`. */
  set(key: string, value: unknown, ttlMs: number, epoch: number): void {
    if (epoch !== this.currentEpoch || ttlMs <= 0) return;
    this.entries.set(key, { v: value }, { ttl: ttlMs });
  }

  delete(keys: readonly string[]): void {
    this.currentEpoch++;
    for (const key of keys) this.entries.delete(key);
  }

  clear(): void {
    this.currentEpoch++;
    this.entries.clear();
  }
}
