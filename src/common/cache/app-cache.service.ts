import { CACHE_MANAGER } from '@nestjs/cache-manager';
import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import type { Cache } from 'cache-manager';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';

/** Lifetimes from the spec's Limits table, in seconds. */
export const CACHE_TTL = { config: 300, user: 600, permission: 120, site: 60 } as const;

/**
 * Read-through cache that is a no-op when CACHE_ENABLED is false, so services call it unconditionally.
 * With REDIS_URL the entries are shared by every process, which keeps invalidation correct when scaled out.
 */
@Injectable()
export class AppCache implements OnApplicationShutdown {
  constructor(
    @Inject(CACHE_MANAGER) private readonly cache: Cache,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  get enabled(): boolean {
    return this.config.cacheEnabled;
  }

  async getOrLoad<T>(key: string, ttlSeconds: number, load: () => Promise<T>): Promise<T> {
    if (!this.enabled) return load();
    const cached = await this.cache.get<{ v: T }>(key);
    if (cached !== undefined && cached !== null) return cached.v;
    const value = await load();
    // Wrapped so a cached null/undefined is told apart from a miss.
    await this.cache.set(key, { v: value }, ttlSeconds * 1000);
    return value;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.cache.disconnect().catch(() => undefined);
  }

  async delete(...keys: string[]): Promise<void> {
    if (!this.enabled || keys.length === 0) return;
    await this.cache.mdel(keys);
  }
}
