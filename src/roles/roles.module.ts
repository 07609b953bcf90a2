import { Module } from '@nestjs/common';
import { RolePermissions } from './role-permissions.service';
import { RolesRepository } from './roles.repository';

@Module({
  providers: [RolesRepository, RolePermissions],
  exports: [RolesRepository, RolePermissions],
})
export class RolesModule {}
