import { CacheModule } from '@nestjs/cache-manager';
import { Global, Module } from '@nestjs/common';
import KeyvRedis from '@keyv/redis';
import { Keyv } from 'keyv';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { ChangeNotifications } from '../../database/change-notifications';
import { AppCache } from './app-cache.service';

/**
 * Cache entries in Redis as `<REDIS_PREFIX>cache:<key>`. The prefix is applied once, by the Redis
 * adapter: Keyv's own namespace prefixing is off (otherwise keys read `p:cache::p:cache:key`).
 */
function redisStore(config: AppConfig): Keyv {
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
      useFactory: (config: AppConfig) => ({
        stores: [config.redisUrl ? redisStore(config) : new Keyv()],
      }),
    }),
  ],
  providers: [ChangeNotifications, AppCache],
  exports: [AppCache],
})
export class AppCacheModule {}
