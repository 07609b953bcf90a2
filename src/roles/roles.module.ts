import { Module } from '@nestjs/common';
import { RolePermissions } from './role-permissions.service';
import { RolesController } from './roles.controller';
import { RolesRepository } from './roles.repository';
import { RolesService } from './roles.service';

@Module({
  controllers: [RolesController],
  providers: [RolesRepository, RolePermissions, RolesService],
  exports: [RolesRepository, RolePermissions],
})
export class RolesModule {}
