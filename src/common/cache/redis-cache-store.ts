import { EventEmitter } from 'node:events';
import type Redis from 'ioredis';

/** The cache's entries are `<REDIS_PREFIX>cache:<key>`; the connection adds REDIS_PREFIX itself. */
const NAMESPACE = 'cache:';

/** `text` matched literally in a Redis glob pattern. */
function globEscaped(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}

/**
 * Keyv's store for the shared cache, on the service's one Redis connection (RedisModule's ioredis).
 * `@keyv/redis` would open a second connection through node-redis, which costs every process about
 * 17 MB of resident memory for a handful of commands (README "Redis"). Keyv serializes the values
 * and checks their expiry; this store only keeps strings with their time to live.
 *
 * The connection has no offline queue, so a command while Redis is away fails at once and AppCache
 * loads from the database. Removals that failed while Redis was away left their entries there if it
 * kept its data (a Redis with persistence, a network cut): from the first error until this process
 * has emptied the cache after Redis's return, every read is a miss. Between "ready" and the end of
 * that emptying a read would otherwise be served an entry whose removal failed.
 */
export class RedisCacheStore extends EventEmitter {
  /** Keyv reads its adapters' options; this one has none. */
  readonly opts = {};
  namespace?: string;
  private untrusted = false;
  private failures = 0;

  constructor(private readonly redis: Redis) {
    super();
    redis.on('error', () => this.distrust());
    redis.on('close', () => this.distrust());
    redis.on('ready', () => this.emptyIfDistrusted());
  }

  async get(key: string): Promise<string | undefined> {
    if (this.untrusted) return undefined;
    return (await this.redis.get(NAMESPACE + key)) ?? undefined;
  }

  async set(key: string, value: string, ttlMs?: number): Promise<boolean> {
    if (ttlMs) await this.redis.set(NAMESPACE + key, value, 'PX', ttlMs);
    else await this.redis.set(NAMESPACE + key, value);
    return true;
  }

  async has(key: string): Promise<boolean> {
    return !this.untrusted && (await this.redis.exists(NAMESPACE + key)) === 1;
  }

  async delete(key: string): Promise<boolean> {
    return (await this.redis.unlink(NAMESPACE + key)) > 0;
  }

  async deleteMany(keys: string[]): Promise<boolean> {
    if (keys.length > 0) await this.redis.unlink(...keys.map((key) => NAMESPACE + key));
    return true;
  }

  /** Removes every entry of the cache, a batch at a time, and fails if any command does. */
  async clear(): Promise<void> {
    // SCAN's pattern and answers are whole key names: the connection's prefix is not applied to
    // them, and is added again to every key UNLINK is given.
    const prefix = this.redis.options.keyPrefix ?? '';
    const pattern = `${globEscaped(prefix + NAMESPACE)}*`;
    let cursor = '0';
    do {
      const [next, names] = await this.redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      if (names.length > 0) await this.redis.unlink(...names.map((name) => name.slice(prefix.length)));
      cursor = next;
    } while (cursor !== '0');
  }

  /** Nothing to close: the connection is RedisModule's, which quits it at shutdown. */
  async disconnect(): Promise<void> {}

  private distrust(): void {
    if (this.redis.status === 'end') return;
    this.failures++;
    this.untrusted = true;
  }

  /** Trusted again only once emptied with no failure since; otherwise the next "ready" empties it again. */
  private emptyIfDistrusted(): void {
    if (!this.untrusted) return;
    const failuresBefore = this.failures;
    void this.clear().then(
      () => {
        if (this.failures === failuresBefore) this.untrusted = false;
      },
      () => undefined,
    );
  }
}
