import { Inject, Injectable } from '@nestjs/common';
import { and, eq, lt, or, sql } from 'drizzle-orm';
import { DATABASE, type Database } from '../database/database.types';
import { rowsOf } from '../database/raw-rows';
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

  /**
   * The answer of the first request; `body` undefined: too large to keep (state `unkept`). A
   * `bodyHash` replaces the one claimed with (a body known only once the request had read it).
   */
  async complete(scope: IdempotencyScope, status: number, body: unknown, bodyHash?: string): Promise<void> {
    await this.db
      .update(idempotencyKeys)
      .set({
        state: body === undefined ? 'unkept' : 'done',
        responseStatus: status,
        responseBody: body ?? null,
        ...(bodyHash === undefined ? {} : { bodyHash }),
      })
      .where(this.where(scope));
  }

  /** Frees a key whose request failed, so the client's retry runs again. */
  async release(scope: IdempotencyScope): Promise<void> {
    await this.db.delete(idempotencyKeys).where(and(this.where(scope), eq(idempotencyKeys.state, 'pending')));
  }

  /** One key past its lifetime, so the request that met it can claim it anew. */
  async deleteIfExpired(scope: IdempotencyScope, now: Date = new Date()): Promise<void> {
    await this.db.delete(idempotencyKeys).where(and(this.where(scope), lt(idempotencyKeys.expiresAt, now)));
  }

  /** Retention: keys past their lifetime; how many went (counted by the database, not read back). */
  async deleteExpired(now: Date = new Date()): Promise<number> {
    const [row] = rowsOf(
      await this.db.execute(sql`
        with deleted as (delete from ${idempotencyKeys} where ${lt(idempotencyKeys.expiresAt, now)} returning 1)
        select count(*)::int as count from deleted`),
    );
    return Number(row?.count ?? 0);
  }

  /**
   * An erasure's: the keys of the user, and any key whose kept answer names one of these records
   * (an admin's create for them, a workflow's answer with the saved record); how many went.
   */
  async deleteOfUserOrNaming(userId: string | null, recordIds: string[]): Promise<number> {
    const ofUser = userId ? sql`${idempotencyKeys.userId} = ${userId}::uuid` : sql`false`;
    const naming =
      recordIds.length > 0
        ? sql`exists (select 1 from unnest(${sql.param(recordIds)}::text[]) as r(id)
            where strpos(${idempotencyKeys.responseBody}::text, r.id) > 0)`
        : sql`false`;
    const rows = await this.db
      .delete(idempotencyKeys)
      .where(or(ofUser, naming))
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
