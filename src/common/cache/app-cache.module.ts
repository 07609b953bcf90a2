import { CacheModule } from '@nestjs/cache-manager';
import { Global, Module } from '@nestjs/common';
import KeyvRedis from '@keyv/redis';
import { Keyv } from 'keyv';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { AppCache } from './app-cache.service';

@Global()
@Module({
  imports: [
    CacheModule.registerAsync({
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => ({
        stores: [
          config.redisUrl
            ? new Keyv({ store: new KeyvRedis(config.redisUrl), namespace: `${config.redisPrefix}cache` })
            : new Keyv(),
        ],
      }),
    }),
  ],
  providers: [AppCache],
  exports: [AppCache],
})
export class AppCacheModule {}
