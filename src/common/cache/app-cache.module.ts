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
  const store = new KeyvRedis(config.redisUrl!, {
    namespace: `${config.redisPrefix}cache`,
    keyPrefixSeparator: ':',
  });
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
