import { Inject, Injectable } from '@nestjs/common';
import { and, count, desc, eq, gte, inArray, isNull, lt, sql, type SQL } from 'drizzle-orm';
import { siteCondition, type SiteScope } from '../../common/context/site-scope';
import { isUuid } from '../../common/validation/is-uuid';
import { DATABASE, type Database } from '../../database/database.types';
import { workflowRuns } from '../../database/schema';
import type { WorkflowRunRow } from '../engine/model/run-records';

/** Which runs a bulk operation takes: statuses, started in [from, to), of one user. */
export interface RunFilter {
  statuses: string[];
  from?: Date;
  to?: Date;
  userId?: string;
}

/**
 * Run history: reads of stored runs (one, a page, the targets of a bulk operation), retention, and
 * the erasure's scrubbing. What a run writes while it runs is the journal's (RunJournalRepository),
 * the queue's claims are RunQueueRepository's.
 */
@Injectable()
export class RunHistoryRepository {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  async findById(id: string): Promise<WorkflowRunRow | null> {
    if (!isUuid(id)) return null;
    const [row] = await this.db.select().from(workflowRuns).where(eq(workflowRuns.id, id)).limit(1);
    return row ?? null;
  }

  /**
   * A page of runs (of one workflow, or of all), newest first, in the site scope; only `userId`'s
   * when given; only those in `status` when given.
   */
  async pageOfWorkflow(
    workflowId: string | null,
    visible: { userId: string | null; site: SiteScope },
    page: { offset: number; limit: number; status?: string },
  ): Promise<{ rows: WorkflowRunRow[]; total: number }> {
    const conditions: (SQL | undefined)[] = [
      workflowId ? eq(workflowRuns.workflowId, workflowId) : undefined,
      siteCondition(workflowRuns.siteId, visible.site),
      page.status ? eq(workflowRuns.status, page.status) : undefined,
    ];
    if (visible.userId) conditions.push(eq(workflowRuns.userId, visible.userId));
    const where = and(...conditions);
    const [rows, [{ total }]] = await Promise.all([
      this.db
        .select()
        .from(workflowRuns)
        .where(where)
        .orderBy(desc(workflowRuns.startedAt), desc(workflowRuns.id))
        .offset(page.offset)
        .limit(page.limit),
      this.db.select({ total: count() }).from(workflowRuns).where(where),
    ]);
    return { rows, total: Number(total) };
  }

  /**
   * The ids of a workflow's runs in the site scope matching a bulk operation's filter, oldest first,
   * at most `limit` (a caller passes its bound + 1 to tell that the bound is exceeded).
   */
  async idsMatching(
    workflowId: string,
    site: SiteScope,
    filter: RunFilter,
    limit: number,
  ): Promise<string[]> {
    const rows = await this.db
      .select({ id: workflowRuns.id })
      .from(workflowRuns)
      .where(
        and(
          eq(workflowRuns.workflowId, workflowId),
          siteCondition(workflowRuns.siteId, site),
          inArray(workflowRuns.status, filter.statuses),
          filter.from ? gte(workflowRuns.startedAt, filter.from) : undefined,
          filter.to ? lt(workflowRuns.startedAt, filter.to) : undefined,
          filter.userId ? eq(workflowRuns.userId, filter.userId) : undefined,
        ),
      )
      .orderBy(workflowRuns.startedAt, workflowRuns.id)
      .limit(limit);
    return rows.map((row) => row.id);
  }

  /** Retention: finished runs older than the cut-off. */
  async deleteFinishedBefore(cutoff: Date): Promise<number> {
    const rows = await this.db
      .delete(workflowRuns)
      .where(
        and(
          lt(workflowRuns.startedAt, cutoff),
          inArray(workflowRuns.status, ['success', 'failed', 'rolled_back', 'cancelled']),
        ),
      )
      .returning({ id: workflowRuns.id });
    return rows.length;
  }

  /** The runs an erasure takes (README "Erasure"): not erased yet, and started by the user. */
  async idsNotErasedOfUser(userId: string): Promise<string[]> {
    return this.idsNotErased(eq(workflowRuns.userId, userId));
  }

  /** Runs not erased yet that saved or were triggered by one of these records. */
  async idsNotErasedOfRecords(recordIds: string[]): Promise<string[]> {
    if (recordIds.length === 0) return [];
    return this.idsNotErased(sql`${workflowRuns.dataId} = any(${sql.param(recordIds)}::uuid[])`);
  }

  /** Runs not erased yet of a form whose input held `value` at `path` (segments; compared as JSON). */
  async idsNotErasedWithInputValue(
    configId: string,
    path: string[],
    value: string | number | boolean,
  ): Promise<string[]> {
    return this.idsNotErased(
      and(
        eq(workflowRuns.configId, configId),
        sql`${workflowRuns.request} -> 'data' #> ${sql.param(path)}::text[] = ${JSON.stringify(value)}::jsonb`,
      )!,
    );
  }

  private async idsNotErased(condition: SQL): Promise<string[]> {
    const rows = await this.db
      .select({ id: workflowRuns.id })
      .from(workflowRuns)
      .where(and(condition, isNull(workflowRuns.erasedAt)));
    return rows.map((row) => row.id);
  }

  /**
   * Scrubs runs for an erasure: the input (and a triggered run's record) and the caller's e-mail
   * leave the stored request, the checkpoint (scope, results, held mail) goes, and each step of the
   * log keeps its name, type, status, attempts, duration and error code only. A run not finished
   * yet ends `cancelled` and loses its lease, so its worker's next write is refused (as a lost
   * lease's is) and nothing of it runs again. A run erased already is left; how many were erased now.
   */
  async eraseRuns(ids: string[]): Promise<number> {
    if (ids.length === 0) return 0;
    const active = sql`${workflowRuns.status} in ('queued', 'running', 'waiting')`;
    const rows = await this.db
      .update(workflowRuns)
      .set({
        request: sql`jsonb_set(jsonb_set(${workflowRuns.request} - 'savedData', '{data}', '{}'::jsonb),
          '{actor,email}', '""'::jsonb)`,
        checkpoint: null,
        steps: sql`(select coalesce(jsonb_agg(jsonb_strip_nulls(jsonb_build_object(
            'name', s -> 'name', 'type', s -> 'type', 'status', s -> 'status', 'attempts', s -> 'attempts',
            'durationMs', s -> 'durationMs', 'reused', s -> 'reused',
            'error', case when s ? 'error' then jsonb_build_object('code', s -> 'error' -> 'code') end))
            || '{"result": null, "erased": true}'::jsonb order by n), '[]'::jsonb)
          from jsonb_array_elements(${workflowRuns.steps}) with ordinality as t(s, n))`,
        message: sql`case when ${active} then 'Ended by an erasure' end`,
        status: sql`case when ${active} then 'cancelled' else ${workflowRuns.status} end`,
        finishedAt: sql`coalesce(${workflowRuns.finishedAt}, now())`,
        leaseOwner: null,
        leaseUntil: null,
        availableAt: null,
        cancelRequested: false,
        stepInFlight: null,
        erasedAt: sql`now()`,
      })
      .where(and(sql`${workflowRuns.id} = any(${sql.param(ids)}::uuid[])`, isNull(workflowRuns.erasedAt)))
      .returning({ id: workflowRuns.id });
    return rows.length;
  }
}
