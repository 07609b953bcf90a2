import { Module } from '@nestjs/common';
import { UserSessionCache } from './user-session.cache';
import { UsersController } from './users.controller';
import { UsersService } from './users.service';
import { UsersRepository } from './users.repository';

@Module({
  controllers: [UsersController],
  providers: [UsersRepository, UserSessionCache, UsersService],
  exports: [UsersRepository, UserSessionCache],
})
export class UsersModule {}
