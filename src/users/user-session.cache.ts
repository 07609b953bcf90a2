import { Injectable } from '@nestjs/common';
import { AppCache, CACHE_TTL } from '../common/cache/app-cache.service';
import { UsersRepository, type UserStanding } from './users.repository';

/** What the access guard needs to know about a token's user on every request. */
export type UserSession = UserStanding;

/** Cached (600 s) view of a user for authentication; every change to a user must call `invalidate`. */
@Injectable()
export class UserSessionCache {
  constructor(
    private readonly users: UsersRepository,
    private readonly cache: AppCache,
  ) {}

  static key(userId: string): string {
    return `user:${userId}`;
  }

  get(userId: string): Promise<UserSession | null> {
    return this.cache.getOrLoad(UserSessionCache.key(userId), CACHE_TTL.user, () =>
      this.users.findStanding(userId),
    );
  }

  invalidate(userId: string): Promise<void> {
    return this.cache.delete(UserSessionCache.key(userId));
  }
}
