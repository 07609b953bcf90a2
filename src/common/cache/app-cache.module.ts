import { CacheModule } from '@nestjs/cache-manager';
import { Global, Module } from '@nestjs/common';
import { Keyv } from 'keyv';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { ChangeNotifications } from '../../database/change-notifications';
import { AppCache } from './app-cache.service';

/**
 * Cache entries in Redis as `<REDIS_PREFIX>cache:<key>`. The prefix is applied once, by the Redis
 * adapter: Keyv's own namespace prefixing is off (otherwise keys read `p:cache::p:cache:key`).
 */
async function redisStore(config: AppConfig): Promise<Keyv> {
  // Loaded only when configured: the Redis adapter and its client are a few MB a process without
  // Redis would carry for nothing.
  const { default: KeyvRedis } = await import('@keyv/redis');
  // As the main Redis client (REDIS_CLIENT_OPTIONS): no offline queue, so a cache read while Redis
  // is down fails at once and AppCache loads from the database; reconnects by itself.
  const store = new KeyvRedis(
    {
      url: config.redisUrl!,
      disableOfflineQueue: true,
      socket: {
        connectTimeout: 2000,
        reconnectStrategy: (attempt: number) => Math.min(attempt * 100, 2000),
      },
    },
    { namespace: `${config.redisPrefix}cache`, keyPrefixSeparator: ':', throwOnConnectError: false },
  );
  // Connected now, not at the first command: a client that is not yet open would wait for Redis
  // inside that command (a request held for the whole outage); an open one that is not ready
  // refuses at once (no offline queue), which AppCache takes as a miss. It reconnects by itself.
  // Removals that failed while Redis was away left their entries there if it kept its data (a Redis
  // with persistence, a network cut): back from an outage, this process empties the cache first.
  let lost = false;
  store.client.on('error', () => {
    lost = true;
  });
  store.client.on('ready', () => {
    if (!lost) return;
    lost = false;
    void store.clear().catch(() => undefined);
  });
  void store.client.connect().catch(() => undefined);
  return new Keyv({ store, namespace: `${config.redisPrefix}cache`, useKeyPrefix: false });
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
