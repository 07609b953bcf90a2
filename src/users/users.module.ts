import { Module } from '@nestjs/common';
import { RolesModule } from '../roles/roles.module';
import { SitesModule } from '../sites/sites.module';
import { PasswordHasher } from '../common/security/password-hasher';
import { FirstAdminSeeder } from './first-admin.seeder';
import { UserSessionCache } from './user-session.cache';
import { UsersController } from './users.controller';
import { UsersService } from './users.service';
import { UsersRepository } from './users.repository';

@Module({
  imports: [RolesModule, SitesModule],
  controllers: [UsersController],
  providers: [UsersRepository, UserSessionCache, UsersService, FirstAdminSeeder, PasswordHasher],
  exports: [UsersService, UserSessionCache, PasswordHasher],
})
export class UsersModule {}
