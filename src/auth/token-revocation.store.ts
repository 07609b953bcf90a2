import { Inject, Injectable } from '@nestjs/common';
import { REDIS, redisReady, type RedisClient } from '../common/redis/redis.module';
import { AppCache } from '../common/cache/app-cache.service';
import { RevokedTokensRepository } from './revoked-tokens.repository';

/** How long a "not revoked" answer is kept in process; a logout removes it in every process at once. */
const CHECK_MEMO_MS = 60_000;
const checkKey = (jti: string) => `revocation-check:${jti}`;

/**
 * The logout blacklist. PostgreSQL holds it: a revocation outlives a Redis restarted empty, and a
 * logout works while Redis is down. Redis, when configured and up, only speeds the check up: a
 * token it knows as revoked is refused without asking further (a logout on another process a
 * moment ago is there before its notice arrives here), but its "no" is never the last word, since
 * a Redis that lost its data says no to everything. The database's answer is kept in process and
 * dropped in every process on logout.
 */
@Injectable()
export class TokenRevocationStore {
  private lastPurge = 0;

  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    private readonly revoked: RevokedTokensRepository,
    private readonly cache: AppCache,
  ) {}

  async revoke(jti: string, expiresAt: Date): Promise<void> {
    const remainingMs = expiresAt.getTime() - Date.now();
    if (remainingMs <= 0) return;
    await this.revoked.insert(jti, expiresAt);
    await this.purgeExpiredNowAndThen();
    if (redisReady(this.redis)) {
      await this.redis.set(`revoked:${jti}`, '1', 'PX', remainingMs).catch(() => undefined);
    }
    await this.cache.delete(checkKey(jti));
  }

  /** Asked on every authenticated request. */
  async isRevoked(jti: string): Promise<boolean> {
    if (redisReady(this.redis)) {
      const known = await this.redis.exists(`revoked:${jti}`).catch(() => 0);
      if (known === 1) return true;
    }
    return this.cache.memoize(checkKey(jti), CHECK_MEMO_MS, () => this.revoked.isRevoked(jti));
  }

  private async purgeExpiredNowAndThen(): Promise<void> {
    if (Date.now() - this.lastPurge < 60_000) return;
    this.lastPurge = Date.now();
    await this.revoked.deleteExpired();
  }
}
