import { CacheModule } from '@nestjs/cache-manager';
import { Global, Module } from '@nestjs/common';
import type { RedisClientType } from '@keyv/redis';
import { Keyv } from 'keyv';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { ChangeNotifications } from '../../database/change-notifications';
import { AppCache } from './app-cache.service';

/**
 * Removes every key matching `pattern`, a batch at a time, and fails if any command does. (The
 * adapter's own `clear` reports a failure as an event and resolves, and leaves the removals already
 * sent unawaited when the connection drops.)
 */
async function emptyNamespace(client: RedisClientType, pattern: string): Promise<void> {
  let cursor = '0';
  do {
    const page = await client.scan(cursor, { MATCH: pattern, COUNT: 1000 });
    if (page.keys.length > 0) await client.unlink(page.keys);
    cursor = String(page.cursor);
  } while (cursor !== '0');
}

/** `text` matched literally in a Redis glob pattern. */
function globEscaped(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}

/**
 * Cache entries in Redis as `<REDIS_PREFIX>cache:<key>`. The prefix is applied once, by the Redis
 * adapter: Keyv's own namespace prefixing is off (otherwise keys read `p:cache::p:cache:key`).
 */
async function redisStore(config: AppConfig): Promise<Keyv> {
  const namespace = `${config.redisPrefix}cache`;
  // Loaded only when configured: the Redis adapter and its client are a few MB a process without
  // Redis would carry for nothing.
  const { default: KeyvRedis } = await import('@keyv/redis');
  // Removals that failed while Redis was away left their entries there if it kept its data (a Redis
  // with persistence, a network cut). From the first error until this process has emptied the
  // cache after Redis's return, every read is a miss: between "ready" and the end of that clear, a
  // read would otherwise be served an entry whose removal failed.
  class EmptiedAfterOutage extends KeyvRedis<unknown> {
    untrusted = false;

    override async get<U>(key: string): Promise<U | undefined> {
      return this.untrusted ? undefined : super.get<U>(key);
    }

    override async getMany<U>(keys: string[]): Promise<Array<U | undefined>> {
      return this.untrusted ? keys.map(() => undefined) : super.getMany<U>(keys);
    }

    override async has(key: string): Promise<boolean> {
      return this.untrusted ? false : super.has(key);
    }

    override async hasMany(keys: string[]): Promise<boolean[]> {
      return this.untrusted ? keys.map(() => false) : super.hasMany(keys);
    }
  }
  // As the main Redis client (REDIS_CLIENT_OPTIONS): no offline queue, so a cache read while Redis
  // is down fails at once and AppCache loads from the database; reconnects by itself.
  const store = new EmptiedAfterOutage(
    {
      url: config.redisUrl!,
      disableOfflineQueue: true,
      socket: {
        connectTimeout: 2000,
        reconnectStrategy: (attempt: number) => Math.min(attempt * 100, 2000),
      },
    },
    { namespace, keyPrefixSeparator: ':', throwOnConnectError: false },
  );
  // Connected now, not at the first command: a client that is not yet open would wait for Redis
  // inside that command (a request held for the whole outage); an open one that is not ready
  // refuses at once (no offline queue), which AppCache takes as a miss. It reconnects by itself.
  let errors = 0;
  store.client.on('error', () => {
    errors++;
    store.untrusted = true;
  });
  store.client.on('ready', () => {
    if (!store.untrusted) return;
    // Trusted again only once emptied with no error since; otherwise the next "ready" (which
    // follows that error) empties it again.
    const errorsBefore = errors;
    void emptyNamespace(store.client as RedisClientType, `${globEscaped(namespace)}:*`).then(
      () => {
        if (errors === errorsBefore) store.untrusted = false;
      },
      () => undefined,
    );
  });
  void store.client.connect().catch(() => undefined);
  return new Keyv({ store, namespace, useKeyPrefix: false });
}

@Global()
@Module({
  imports: [
    CacheModule.registerAsync({
      inject: [APP_CONFIG],
      useFactory: async (config: AppConfig) => ({
        stores: [config.redisUrl ? await redisStore(config) : new Keyv()],
      }),
    }),
  ],
  providers: [ChangeNotifications, AppCache],
  exports: [AppCache],
})
export class AppCacheModule {}
