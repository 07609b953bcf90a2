import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import { AiModule } from './ai/ai.module';
import { AuthModule } from './auth/auth.module';
import { FormConfigsModule } from './form-configs/form-configs.module';
import { DataModule } from './data/data.module';
import { WorkflowModule } from './workflow/workflow.module';
import { ExportModule } from './export/export.module';
import { ImportsModule } from './imports/imports.module';
import { StatsModule } from './stats/stats.module';
import { PermissionsModule } from './permissions/permissions.module';
import { SitesModule } from './sites/sites.module';
import { AppCacheModule } from './common/cache/app-cache.module';
import { AllExceptionsFilter } from './common/errors/all-exceptions.filter';
import { createValidationPipe } from './common/http/validation.pipe';
import { I18nSupportModule } from './common/i18n/i18n-support.module';
import { i18nCoreModule } from './common/i18n/i18n-core.module';
import { MetricsModule } from './common/metrics/metrics.module';
import { RedisModule } from './common/redis/redis.module';
import { ThrottlingModule } from './common/throttling/throttling.module';
import type { AppConfig } from './config/app-config';
import { AppConfigModule } from './config/config.module';
import { DatabaseClient } from './database/database-client';
import { DatabaseModule } from './database/database.module';
import { EventsModule } from './events/events.module';
import { HealthModule } from './health/health.module';
import { WebhooksModule } from './webhooks/webhooks.module';
import { ErasureModule } from './erasure/erasure.module';

export interface AppModuleOptions {
  config: AppConfig;
  /** An open database to use instead of opening one from the configuration (tests). */
  database?: DatabaseClient;
  /** More modules to load, such as one providing custom workflow step types. */
  modules?: DynamicModule['imports'];
}

@Module({})
export class AppModule {
  static forRoot(options: AppModuleOptions): DynamicModule {
    return {
      module: AppModule,
      imports: [
        AppConfigModule.forRoot(options.config),
        MetricsModule,
        DatabaseModule.forRoot(options.database),
        RedisModule,
        AppCacheModule,
        i18nCoreModule(),
        I18nSupportModule,
        // Throttling first: its guard counts a request before authentication looks at it.
        ThrottlingModule,
        SitesModule,
        AuthModule,
        PermissionsModule,
        HealthModule,
        FormConfigsModule,
        StatsModule,
        ExportModule,
        ImportsModule,
        EventsModule,
        DataModule,
        WorkflowModule,
        WebhooksModule,
        ErasureModule,
        AiModule,
        ...(options.modules ?? []),
      ],
      providers: [
        { provide: APP_FILTER, useClass: AllExceptionsFilter },
        { provide: APP_PIPE, useFactory: createValidationPipe },
      ],
    };
  }
}
