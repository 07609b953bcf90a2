import { Module } from '@nestjs/common';
import { UserSessionCache } from './user-session.cache';
import { UsersRepository } from './users.repository';

@Module({
  providers: [UsersRepository, UserSessionCache],
  exports: [UsersRepository, UserSessionCache],
})
export class UsersModule {}
