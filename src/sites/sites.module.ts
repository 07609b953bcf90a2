import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { SiteResolver } from './site-resolver.service';
import { SitesController } from './sites.controller';
import { SitesRepository } from './sites.repository';
import { SitesService } from './sites.service';
import { TenantGuard } from './tenant.guard';

@Module({
  controllers: [SitesController],
  providers: [SitesRepository, SiteResolver, SitesService, { provide: APP_GUARD, useClass: TenantGuard }],
  exports: [SiteResolver, SitesService],
})
export class SitesModule {}
