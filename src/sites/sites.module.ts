import { Module } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { SiteResolver } from './site-resolver.service';
import { SitesController } from './sites.controller';
import { SitesRepository } from './sites.repository';
import { SitesService } from './sites.service';
import { TenantInterceptor } from './tenant.interceptor';

@Module({
  controllers: [SitesController],
  providers: [
    SitesRepository,
    SiteResolver,
    SitesService,
    { provide: APP_INTERCEPTOR, useClass: TenantInterceptor },
  ],
  exports: [SiteResolver, SitesService],
})
export class SitesModule {}
