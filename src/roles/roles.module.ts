import { Module } from '@nestjs/common';
import { RoleHolders } from './role-holders';
import { RolePermissions } from './role-permissions.service';
import { RolesController } from './roles.controller';
import { RolesRepository } from './roles.repository';
import { RolesService } from './roles.service';
import { SystemRolesSeeder } from './system-roles.seeder';

@Module({
  controllers: [RolesController],
  providers: [RolesRepository, RolePermissions, RolesService, RoleHolders, SystemRolesSeeder],
  exports: [RolesService, RolePermissions, RoleHolders],
})
export class RolesModule {}
