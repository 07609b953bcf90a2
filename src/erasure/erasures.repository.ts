import { Inject, Injectable } from '@nestjs/common';
import { and, count, desc, eq, sql } from 'drizzle-orm';
import { isUuid } from '../common/validation/is-uuid';
import { DATABASE, type Database } from '../database/database.types';
import { leaseUntil, oldestAbandoned } from '../database/leases';
import { erasures } from '../database/schema';

export type ErasureRow = typeof erasures.$inferSelect;
export type NewErasure = Pick<
  typeof erasures.$inferInsert,
  'kind' | 'subject' | 'subjectKey' | 'recordIds' | 'runIds' | 'requestedBy'
>;

/**
 * Erasures: the operation while it runs (held under a lease by the instance working through it,
 * taken over by another once the lease expired), the audit entry once done.
 */
@Injectable()
export class ErasuresRepository {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  /**
   * The latest erasure of the subject when it is still running, or when `same(latest)` says the
   * request would repeat it; else a new one, stored `running` and held by `owner` (`created`).
   * Serialized per subject, so two requests at once give one erasure.
   */
  async insertUnlessRepeated(
    erasure: NewErasure,
    same: (latest: ErasureRow) => boolean,
    owner: string,
    leaseMs: number,
  ): Promise<{ row: ErasureRow; created: boolean }> {
    return this.db.transaction(async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`erasure:${erasure.subjectKey}`}))`);
      const [latest] = await tx
        .select()
        .from(erasures)
        .where(eq(erasures.subjectKey, erasure.subjectKey))
        .orderBy(desc(erasures.createdAt))
        .limit(1);
      if (latest && (latest.status === 'running' || same(latest))) return { row: latest, created: false };
      const [row] = await tx
        .insert(erasures)
        .values({ ...erasure, leaseOwner: owner, leaseUntil: leaseUntil(leaseMs) })
        .returning();
      return { row, created: true };
    });
  }

  async findById(id: string): Promise<ErasureRow | null> {
    if (!isUuid(id)) return null;
    const [row] = await this.db.select().from(erasures).where(eq(erasures.id, id)).limit(1);
    return row ?? null;
  }

  /** One page of the audit log, newest first, and how many erasures there are. */
  async page(paging: { page: number; limit: number }): Promise<{ rows: ErasureRow[]; total: number }> {
    const [rows, [{ total }]] = await Promise.all([
      this.db
        .select()
        .from(erasures)
        .orderBy(desc(erasures.createdAt), desc(erasures.id))
        .limit(paging.limit)
        .offset((paging.page - 1) * paging.limit),
      this.db.select({ total: count() }).from(erasures),
    ]);
    return { rows, total: Number(total) };
  }

  /** Takes one running erasure whose lease expired (its instance died or stopped), or null. */
  async claimAbandoned(owner: string, leaseMs: number): Promise<ErasureRow | null> {
    const [row] = await this.db
      .update(erasures)
      .set({ leaseOwner: owner, leaseUntil: leaseUntil(leaseMs) })
      .where(oldestAbandoned(erasures, sql`status = 'running'`))
      .returning();
    return row ?? null;
  }

  /**
   * Records step `step` done with what it removed (added to the counts: a step repeated after a
   * crash adds what it found left) and renews the lease; the erasure is `done` after the last step.
   * False when the lease was lost (another instance took the erasure over) or the step was recorded
   * already.
   */
  async completeStep(
    id: string,
    owner: string,
    step: number,
    removed: Record<string, number>,
    last: boolean,
    leaseMs: number,
  ): Promise<boolean> {
    const counts = Object.entries(removed).reduce(
      (sum, [kind, n]) =>
        sql`jsonb_set(${sum}, ${`{${kind}}`}::text[], to_jsonb(coalesce((${erasures.counts} ->> ${kind})::int, 0) + ${n}::int))`,
      sql`${erasures.counts}`,
    );
    const rows = await this.db
      .update(erasures)
      .set(
        last
          ? {
              counts,
              nextStep: step + 1,
              status: 'done',
              finishedAt: new Date(),
              leaseOwner: null,
              leaseUntil: null,
            }
          : { counts, nextStep: step + 1, leaseUntil: leaseUntil(leaseMs) },
      )
      .where(
        and(
          eq(erasures.id, id),
          eq(erasures.leaseOwner, owner),
          eq(erasures.nextStep, step),
          eq(erasures.status, 'running'),
        ),
      )
      .returning({ id: erasures.id });
    return rows.length === 1;
  }
}
