import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { FormConfigsModule } from '../form-configs/form-configs.module';
import { FormAccessService } from './form-access.service';
import { FormPermissionGuard } from './form-permission.guard';
import { FormPermissionsRepository } from './form-permissions.repository';
import { FormPermissionsService } from './form-permissions.service';
import { PermissionsController } from './permissions.controller';
import { RolesModule } from '../roles/roles.module';
import { SitesModule } from '../sites/sites.module';

/** Imported after AuthModule, so its guard runs after the access guard has authenticated the caller. */
@Module({
  imports: [FormConfigsModule, RolesModule, SitesModule],
  controllers: [PermissionsController],
  providers: [
    FormPermissionsRepository,
    FormAccessService,
    FormPermissionsService,
    { provide: APP_GUARD, useClass: FormPermissionGuard },
  ],
  exports: [FormAccessService],
})
export class PermissionsModule {}
