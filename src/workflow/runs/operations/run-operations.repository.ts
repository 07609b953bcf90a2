import { Inject, Injectable } from '@nestjs/common';
import { and, eq, sql } from 'drizzle-orm';
import { isUuid } from '../../../common/validation/is-uuid';
import { DATABASE, type Database } from '../../../database/database.types';
import { leaseUntil, oldestAbandoned } from '../../../database/leases';
import { workflowOperations } from '../../../database/schema';

export type RunOperationRow = typeof workflowOperations.$inferSelect;
export type NewRunOperation = Pick<
  typeof workflowOperations.$inferInsert,
  'workflowId' | 'kind' | 'request' | 'runIds' | 'matched' | 'userId'
>;

/**
 * Bulk operations on runs. The instance that accepts one holds it under a lease while it works
 * through the matched runs; every step renews the lease, so an operation whose instance died is
 * taken over (from where its counters stand) once the lease expired.
 */
@Injectable()
export class RunOperationsRepository {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  /** Stored `running`, held by `owner`. */
  async insert(operation: NewRunOperation, owner: string, leaseMs: number): Promise<RunOperationRow> {
    const [row] = await this.db
      .insert(workflowOperations)
      .values({ ...operation, leaseOwner: owner, leaseUntil: leaseUntil(leaseMs) })
      .returning();
    return row;
  }

  async findById(id: string): Promise<RunOperationRow | null> {
    if (!isUuid(id)) return null;
    const [row] = await this.db
      .select()
      .from(workflowOperations)
      .where(eq(workflowOperations.id, id))
      .limit(1);
    return row ?? null;
  }

  /** Takes one running operation whose lease expired (its instance died), or null. */
  async claimAbandoned(owner: string, leaseMs: number): Promise<RunOperationRow | null> {
    const [row] = await this.db
      .update(workflowOperations)
      .set({ leaseOwner: owner, leaseUntil: leaseUntil(leaseMs) })
      .where(oldestAbandoned(workflowOperations, sql`status = 'running'`))
      .returning();
    return row ?? null;
  }

  /**
   * Counts one handled run (done, or failed with its code) and renews the lease; false when the
   * lease was lost (another instance took the operation over).
   */
  async count(
    id: string,
    owner: string,
    leaseMs: number,
    outcome: { failed: { runId: string; code: string } | null },
  ): Promise<boolean> {
    const failure = outcome.failed;
    const rows = await this.db
      .update(workflowOperations)
      .set(
        failure
          ? {
              failed: sql`${workflowOperations.failed} + 1`,
              failures: sql`${workflowOperations.failures} || ${JSON.stringify([failure])}::jsonb`,
              leaseUntil: leaseUntil(leaseMs),
            }
          : { done: sql`${workflowOperations.done} + 1`, leaseUntil: leaseUntil(leaseMs) },
      )
      .where(and(eq(workflowOperations.id, id), eq(workflowOperations.leaseOwner, owner)))
      .returning({ id: workflowOperations.id });
    return rows.length === 1;
  }

  async extendLease(id: string, owner: string, leaseMs: number): Promise<boolean> {
    const rows = await this.db
      .update(workflowOperations)
      .set({ leaseUntil: leaseUntil(leaseMs) })
      .where(and(eq(workflowOperations.id, id), eq(workflowOperations.leaseOwner, owner)))
      .returning({ id: workflowOperations.id });
    return rows.length === 1;
  }

  async finish(id: string, owner: string): Promise<void> {
    await this.db
      .update(workflowOperations)
      .set({ status: 'done', finishedAt: new Date(), leaseOwner: null, leaseUntil: null })
      .where(and(eq(workflowOperations.id, id), eq(workflowOperations.leaseOwner, owner)));
  }
}
