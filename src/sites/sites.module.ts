import { Global, Module } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { SiteResolver } from './site-resolver.service';
import { SitesRepository } from './sites.repository';
import { TenantInterceptor } from './tenant.interceptor';

@Global()
@Module({
  providers: [SitesRepository, SiteResolver, { provide: APP_INTERCEPTOR, useClass: TenantInterceptor }],
  exports: [SiteResolver, SitesRepository],
})
export class SitesModule {}
