import { CacheModule } from '@nestjs/cache-manager';
import { Global, Module } from '@nestjs/common';
import { Keyv } from 'keyv';
import { ChangeNotifications } from '../../database/change-notifications';
import { REDIS, type RedisClient } from '../redis/redis.module';
import { AppCache } from './app-cache.service';
import { RedisCacheStore } from './redis-cache-store';

/** The shared cache: in Redis (on the service's one connection) when REDIS_URL is set, else in memory. */
@Global()
@Module({
  imports: [
    CacheModule.registerAsync({
      inject: [REDIS],
      // Keyv's own key prefix is off: the store names its keys (`<REDIS_PREFIX>cache:<key>`).
      useFactory: (redis: RedisClient) => ({
        stores: [redis ? new Keyv({ store: new RedisCacheStore(redis), useKeyPrefix: false }) : new Keyv()],
      }),
    }),
  ],
  providers: [ChangeNotifications, AppCache],
  exports: [AppCache],
})
export class AppCacheModule {}
