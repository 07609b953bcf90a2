import { LRUCache } from 'lru-cache';

/** Most entries one process keeps; the least recently used go first. */
const MAX_ENTRIES = 20_000;

/** Freezes a cached value, so no caller can change what the next caller gets. */
export function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  for (const inner of Object.values(value as object)) deepFreeze(inner);
  return Object.freeze(value);
}

/**
 * Values of hot lookups kept in this process. `epoch` moves on every invalidation: a value loaded
 * while an invalidation happened is not kept, because it may be the old one.
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
    this.entries.set(key, { v: deepFreeze(value) }, { ttl: ttlMs });
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
