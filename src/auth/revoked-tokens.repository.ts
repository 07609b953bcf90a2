import { Inject, Injectable } from '@nestjs/common';
import { and, eq, gt, lt } from 'drizzle-orm';
import { DATABASE, type Database } from '../database/database.types';
import { revokedTokens } from '../database/schema';

/** The logout blacklist as stored: one row per revoked token until it would have expired anyway. */
@Injectable()
export class RevokedTokensRepository {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  async insert(jti: string, expiresAt: Date): Promise<void> {
    await this.db.insert(revokedTokens).values({ jti, expiresAt }).onConflictDoNothing();
  }

  async isRevoked(jti: string): Promise<boolean> {
    const rows = await this.db
      .select({ jti: revokedTokens.jti })
      .from(revokedTokens)
      .where(and(eq(revokedTokens.jti, jti), gt(revokedTokens.expiresAt, new Date())))
      .limit(1);
    return rows.length > 0;
  }

  async deleteExpired(): Promise<void> {
    await this.db.delete(revokedTokens).where(lt(revokedTokens.expiresAt, new Date()));
  }
}
