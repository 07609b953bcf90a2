import { CACHE_MANAGER } from '@nestjs/cache-manager';
import { Inject, Injectable, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import type { Cache } from 'cache-manager';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { ChangeNotifications } from '../../database/change-notifications';
import { onPrimary } from '../../database/replicas/read-scope';
import { deepFreeze } from './deep-freeze';
import { LocalMemo } from './local-memo';

/** Lifetimes from the spec's Limits table, in seconds. */
export const CACHE_TTL = { config: 300, user: 600, permission: 120, site: 60 } as const;

/**
 * Longest a value stays in process memory without CACHE_ENABLED. Every change the service makes
 * removes it at once in every process; this bound only covers changes made around the service
 * (by hand in the database).
 */
const UNCACHED_MEMO_MS = 30_000;
const INVALIDATION_CHANNEL = 'fdws_cache_invalidation';
/** pg_notify refuses payloads of 8,000 bytes or more. */
const MAX_PAYLOAD = 7000;

/**
 * Read-through cache of the lookups almost every request makes (user, configuration, grants, role
 * permissions, site, revocation). Two levels:
 * - in process, always: values are kept in this process and removed in every process the moment the
 *   service changes them (`delete` is announced through the database: LISTEN/NOTIFY on PostgreSQL,
 *   in process on PGlite). While that announcement channel is down nothing is kept, so a process
 *   never serves a value another one has changed;
 * - shared, with CACHE_ENABLED: the spec's lifetimes, in Redis when REDIS_URL is set (shared by
 *   every process) or in memory.
 * Without CACHE_ENABLED no value outlives UNCACHED_MEMO_MS, so a change made around the service
 * is seen within that time.
 */
@Injectable()
export class AppCache implements OnModuleInit, OnApplicationShutdown {
  private readonly memo = new LocalMemo();

  constructor(
    @Inject(CACHE_MANAGER) private readonly cache: Cache,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly notifications: ChangeNotifications,
  ) {}

  get enabled(): boolean {
    return this.config.cacheEnabled;
  }

  onModuleInit(): void {
    this.notifications.subscribe(INVALIDATION_CHANNEL, {
      onNotice: (payload) => this.memo.delete(parseKeys(payload)),
      onReset: () => this.memo.clear(),
    });
  }

  getOrLoad<T>(key: string, ttlSeconds: number, load: () => Promise<T>): Promise<T> {
    const ttlMs = this.enabled ? ttlSeconds * 1000 : Math.min(ttlSeconds * 1000, UNCACHED_MEMO_MS);
    return this.memoize(key, ttlMs, () =>
      this.enabled ? this.sharedGetOrLoad(key, ttlSeconds, load) : load(),
    );
  }

  /**
   * The process level alone, for answers that must never be kept in a shared cache (a token's
   * revocation: a stale "not revoked" written by a racing process would outlive the logout).
   */
  async memoize<T>(key: string, ttlMs: number, load: () => Promise<T>): Promise<T> {
    const kept = this.notifications.connected ? this.memo.get(key) : undefined;
    if (kept) return kept.v as T;
    const epoch = this.memo.epoch;
    // Frozen whether or not it is kept (the announcement channel down, an invalidation meanwhile):
    // a caller that changed a value it was handed would otherwise fail only while values are kept.
    // On the primary even inside a routed read: a replica may be behind the invalidation that
    // emptied this key, and the old value would then be kept for everyone.
    const value = deepFreeze(await onPrimary(load));
    if (this.notifications.connected) this.memo.set(key, value, ttlMs, epoch);
    return value;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.cache.disconnect().catch(() => undefined);
  }

  /**
   * Forgets everything this process keeps, for changes made around the service (a restored backup,
   * tables emptied by hand or by a test) that no notice announced.
   */
  forgetEverythingKept(): void {
    this.memo.clear();
  }

  /** Forgets `keys` here, in the shared cache and in every other process. */
  async delete(...keys: string[]): Promise<void> {
    if (keys.length === 0) return;
    this.memo.delete(keys);
    // Redis away: nothing to remove there now (a Redis restarted empty holds nothing stale).
    if (this.enabled) await this.cache.mdel(keys).catch(() => undefined);
    for (const payload of payloadsOf(keys)) await this.notifications.notify(INVALIDATION_CHANNEL, payload);
  }

  private async sharedGetOrLoad<T>(key: string, ttlSeconds: number, load: () => Promise<T>): Promise<T> {
    // The shared cache unreachable (Redis down) is a miss: the database answers.
    const cached = await this.cache.get<{ v: T }>(key).catch(() => undefined);
    if (cached !== undefined && cached !== null) return cached.v;
    const epoch = this.memo.epoch;
    const value = await load();
    // Wrapped so a cached null/undefined is told apart from a miss. Not stored when something was
    // invalidated meanwhile: the value may be the one that invalidation removed.
    if (this.memo.epoch === epoch)
      await this.cache.set(key, { v: value }, ttlSeconds * 1000).catch(() => undefined);
    return value;
  }
}

function parseKeys(payload: string): string[] {
  try {
    const keys: unknown = JSON.parse(payload);
    return Array.isArray(keys) ? keys.filter((key): key is string => typeof key === 'string') : [];
  } catch {
    return [];
  }
}

/** The keys as JSON arrays small enough for one notification each. */
function payloadsOf(keys: string[]): string[] {
  const payloads: string[] = [];
  let batch: string[] = [];
  for (const key of keys) {
    if (batch.length > 0 && JSON.stringify([...batch, key]).length > MAX_PAYLOAD) {
      payloads.push(JSON.stringify(batch));
      batch = [];
    }
    batch.push(key);
  }
  if (batch.length > 0) payloads.push(JSON.stringify(batch));
  return payloads;
}
