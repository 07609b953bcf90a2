import { Inject, Injectable } from '@nestjs/common';
import { and, eq, gt, lt } from 'drizzle-orm';
import { DATABASE, type Database } from '../database/database.types';
import { revokedTokens } from '../database/schema';
import { REDIS, type RedisClient } from '../common/redis/redis.module';
import { AppCache } from '../common/cache/app-cache.service';

/** How long a "not revoked" answer is kept in process; a logout removes it in every process at once. */
const CHECK_MEMO_MS = 60_000;
const checkKey = (jti: string) => `revocation-check:${jti}`;

/**
 * The logout blacklist: in Redis when configured (shared by every process, expiring by itself),
 * otherwise in the database so a restart does not forget it.
 */
@Injectable()
export class TokenRevocationStore {
  private lastPurge = 0;

  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(DATABASE) private readonly db: Database,
    private readonly cache: AppCache,
  ) {}

  async revoke(jti: string, expiresAt: Date): Promise<void> {
    const remainingMs = expiresAt.getTime() - Date.now();
    if (remainingMs <= 0) return;
    if (this.redis) {
      await this.redis.set(`revoked:${jti}`, '1', 'PX', remainingMs);
    } else {
      await this.db.insert(revokedTokens).values({ jti, expiresAt }).onConflictDoNothing();
      await this.purgeExpiredNowAndThen();
    }
    await this.cache.delete(checkKey(jti));
  }

  /** Asked on every authenticated request. */
  isRevoked(jti: string): Promise<boolean> {
    // With Redis every process reads the one shared blacklist: a logout holds everywhere at once,
    // not a notification later. Without it, the answer is kept in process and dropped on logout.
    if (this.redis) return this.lookUp(jti);
    return this.cache.memoize(checkKey(jti), CHECK_MEMO_MS, () => this.lookUp(jti));
  }

  private async lookUp(jti: string): Promise<boolean> {
    if (this.redis) return (await this.redis.exists(`revoked:${jti}`)) === 1;
    const rows = await this.db
      .select({ jti: revokedTokens.jti })
      .from(revokedTokens)
      .where(and(eq(revokedTokens.jti, jti), gt(revokedTokens.expiresAt, new Date())))
      .limit(1);
    return rows.length > 0;
  }

  private async purgeExpiredNowAndThen(): Promise<void> {
    if (Date.now() - this.lastPurge < 60_000) return;
    this.lastPurge = Date.now();
    await this.db.delete(revokedTokens).where(lt(revokedTokens.expiresAt, new Date()));
  }
}
