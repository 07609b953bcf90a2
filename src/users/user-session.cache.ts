import { Injectable } from '@nestjs/common';
import { AppCache, CACHE_TTL } from '../common/cache/app-cache.service';
import { UsersRepository } from './users.repository';

/** What the access guard needs to know about a token's user on every request. */
export interface UserSession {
  id: string;
  email: string;
  role: string;
  siteId: string | null;
  isActive: boolean;
  tokenVersion: number;
}

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
    return this.cache.getOrLoad(UserSessionCache.key(userId), CACHE_TTL.user, async () => {
      const row = await this.users.findById(userId);
      if (!row) return null;
      return {
        id: row.id,
        email: row.email,
        role: row.role,
        siteId: row.siteId,
        isActive: row.isActive,
        tokenVersion: row.tokenVersion,
      };
    });
  }

  invalidate(userId: string): Promise<void> {
    return this.cache.delete(UserSessionCache.key(userId));
  }
}
