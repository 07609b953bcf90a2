import { Inject, Injectable } from '@nestjs/common';
import { and, eq, lt } from 'drizzle-orm';
import { DATABASE, type Database } from '../database/database.types';
import { idempotencyKeys } from '../database/schema';

export type IdempotencyRow = typeof idempotencyKeys.$inferSelect;
export type IdempotencyScope = { userId: string; route: string; key: string };

@Injectable()
export class IdempotencyRepository {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  /** Claims the key for this request; false when another request holds or answered it. */
  async claim(scope: IdempotencyScope, bodyHash: string, expiresAt: Date): Promise<boolean> {
    const rows = await this.db
      .insert(idempotencyKeys)
      .values({ ...scope, bodyHash, state: 'pending', expiresAt })
      .onConflictDoNothing()
      .returning({ key: idempotencyKeys.key });
    return rows.length === 1;
  }

  async find(scope: IdempotencyScope): Promise<IdempotencyRow | null> {
    const [row] = await this.db.select().from(idempotencyKeys).where(this.where(scope)).limit(1);
    return row ?? null;
  }

  /** The answer of the first request; `body` undefined: too large to keep (state `unkept`). */
  async complete(scope: IdempotencyScope, status: number, body: unknown): Promise<void> {
    await this.db
      .update(idempotencyKeys)
      .set({
        state: body === undefined ? 'unkept' : 'done',
        responseStatus: status,
        responseBody: body ?? null,
      })
      .where(this.where(scope));
  }

  /** Frees a key whose request failed, so the client's retry runs again. */
  async release(scope: IdempotencyScope): Promise<void> {
    await this.db.delete(idempotencyKeys).where(and(this.where(scope), eq(idempotencyKeys.state, 'pending')));
  }

  /** Retention: keys past their lifetime; how many went. */
  async deleteExpired(now: Date = new Date()): Promise<number> {
    const rows = await this.db
      .delete(idempotencyKeys)
      .where(lt(idempotencyKeys.expiresAt, now))
      .returning({ key: idempotencyKeys.key });
    return rows.length;
  }

  private where(scope: IdempotencyScope) {
    return and(
      eq(idempotencyKeys.userId, scope.userId),
      eq(idempotencyKeys.route, scope.route),
      eq(idempotencyKeys.key, scope.key),
    );
  }
}
