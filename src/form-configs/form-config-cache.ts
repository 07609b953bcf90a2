import { Injectable } from '@nestjs/common';
import { AppCache, CACHE_TTL } from '../common/cache/app-cache.service';
import type { ConfigResponseDto } from './dto/form-config.dto';
import type { ConfigRow } from './form-configs.repository';

/**
 * The spec's per-user configuration cache (`config:{id}:{userId}`, 300 s). Entries carry the
 * configuration's generation; an update or delete bumps the generation, which invalidates every
 * user's entry at once (also across processes when the cache lives in Redis).
 */
@Injectable()
export class FormConfigCache {
  constructor(private readonly cache: AppCache) {}

  async getOrLoad(
    configId: string,
    userId: string,
    load: () => Promise<ConfigResponseDto>,
  ): Promise<ConfigResponseDto> {
    if (!this.cache.enabled) return load();
    const generation = await this.generation(configId);
    const entry = await this.cache.getOrLoad(`config:${configId}:${userId}`, CACHE_TTL.config, async () => ({
      generation,
      config: await load(),
    }));
    if (entry.generation === generation) return entry.config;
    await this.cache.delete(`config:${configId}:${userId}`);
    return this.getOrLoad(configId, userId, load);
  }

  /**
   * The active configuration row itself (300 s), for the lookups every data request starts with.
   * Stored with ISO dates (a shared cache serializes to JSON) and revived on the way out.
   */
  async row(configId: string, load: () => Promise<ConfigRow | null>): Promise<ConfigRow | null> {
    const cached = await this.cache.getOrLoad(`config-row:${configId}`, CACHE_TTL.config, load);
    if (!cached) return null;
    return { ...cached, createdAt: new Date(cached.createdAt), updatedAt: new Date(cached.updatedAt) };
  }

  async invalidate(configId: string): Promise<void> {
    // Also without CACHE_ENABLED: the row is kept in process memory (AppCache) and must go.
    await this.cache.delete(`config-generation:${configId}`, `config-row:${configId}`);
  }

  /** A random token per generation; a missing generation (new or invalidated) gets a fresh one. */
  private generation(configId: string): Promise<string> {
    return this.cache.getOrLoad(`config-generation:${configId}`, 86_400, async () =>
      Math.random().toString(36).slice(2),
    );
  }
}
