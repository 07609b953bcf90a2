import { Inject, Injectable } from '@nestjs/common';
import { and, count, eq, inArray, isNull, sql } from 'drizzle-orm';
import { isUuid } from '../../../common/validation/is-uuid';
import { DATABASE, type Database } from '../../../database/database.types';
import { leaseUntil } from '../../../database/leases';
import { rowsOf } from '../../../database/raw-rows';
import { workflowRuns } from '../../../database/schema';
import type { NewRun, RunProgress, WorkflowRunRow } from '../model/run-records';

/** What `enqueueTriggered` did: queued the run, or why not. */
export type TriggeredEnqueue = 'queued' | 'stored_already' | 'runs_per_event' | 'queued_per_user';

/** The bounds of triggered runs: per root event (any status), and queued or running per user. */
export interface TriggerBounds {
  maxRunsPerEvent: number;
  maxQueuedPerUser: number;
}

export interface QueueState {
  queued: number;
  due: number;
  running: number;
  oldestDueSeconds: number;
}

/** A transaction-scoped advisory lock on a name (released at commit or rollback). */
const advisoryLock = (name: string) => sql`select pg_advisory_xact_lock(hashtextextended(${name}, 0))`;

/**
 * The queue of durable runs, which are rows of workflow_runs: what puts a run in it (bounded per user
 * and per triggering event), takes it out (`FOR UPDATE SKIP LOCKED`, leases) or puts it back (a
 * retry's delay, a decision), and its state at a glance. The run's own writes are the journal's
 * (RunJournalRepository); reads of finished runs are history (RunHistoryRepository).
 */
@Injectable()
export class RunQueueRepository {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  /**
   * A run for the queue (any instance takes it), unless its user already has `maxPerUser` runs queued
   * or running (runs they queued themselves: triggered runs have their own bound): then nothing is
   * written and the answer is false. The user's runs are counted and the run inserted under a
   * per-user advisory lock, so concurrent requests cannot both pass the bound.
   */
  async enqueueWithinBound(
    run: NewRun,
    progress: Pick<RunProgress, 'checkpoint' | 'nextStep' | 'steps' | 'dataId'>,
    maxPerUser: number,
  ): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      await tx.execute(advisoryLock(`workflow_runs:${run.userId}`));
      const [{ active }] = await tx
        .select({ active: count() })
        .from(workflowRuns)
        .where(
          and(
            eq(workflowRuns.userId, run.userId!),
            inArray(workflowRuns.status, ['queued', 'running']),
            isNull(workflowRuns.triggerRoot),
          ),
        );
      if (Number(active) >= maxPerUser) return false;
      await tx
        .insert(workflowRuns)
        .values({ ...run, ...progress, status: 'queued', availableAt: sql`now()` });
      return true;
    });
  }

  /**
   * A triggered run for the queue, under an id chosen from what caused it (the chain's root event
   * and the workflow), unless: that run is stored already (the event handed out twice, or the
   * workflow already triggered in this chain); the root event caused `maxRunsPerEvent` runs
   * already; or the run's user has `maxQueuedPerUser` triggered runs queued or running. Counted
   * and inserted under advisory locks on the root event, then on the user (always in this order,
   * so two of these never wait on each other crosswise), so concurrent dispatchers of one chain or
   * one user cannot both pass a bound.
   */
  async enqueueTriggered(
    run: NewRun & { triggerRoot: string },
    progress: Pick<RunProgress, 'checkpoint' | 'nextStep' | 'steps' | 'dataId'>,
    bounds: TriggerBounds,
  ): Promise<TriggeredEnqueue> {
    return this.db.transaction(async (tx) => {
      await tx.execute(advisoryLock(`workflow_runs:root:${run.triggerRoot}`));
      await tx.execute(advisoryLock(`workflow_runs:triggered:${run.userId}`));
      const [counts] = rowsOf(
        await tx.execute(sql`select
          exists (select 1 from ${workflowRuns} where id = ${run.id}::uuid) as stored,
          (select count(*) from ${workflowRuns} where trigger_root = ${run.triggerRoot}::uuid)::int as of_root,
          (select count(*) from ${workflowRuns} where user_id = ${run.userId}::uuid
            and status in ('queued', 'running') and trigger_root is not null)::int as of_user`),
      );
      if (counts.stored === true || counts.stored === 't') return 'stored_already';
      if (Number(counts.of_root) >= bounds.maxRunsPerEvent) return 'runs_per_event';
      if (Number(counts.of_user) >= bounds.maxQueuedPerUser) return 'queued_per_user';
      await tx
        .insert(workflowRuns)
        .values({ ...run, ...progress, status: 'queued', availableAt: sql`now()` });
      return 'queued';
    });
  }

  /**
   * Takes the next run that is due: queued and available, or running under an expired lease (its
   * process died). Several instances may call this at once; each run goes to one of them. Fair
   * between users: the due run of the user with the fewest runs running now goes first (oldest
   * first among equals), so one user's backlog never holds another user's run behind it.
   */
  async claimNext(owner: string, leaseMs: number): Promise<WorkflowRunRow | null> {
    const [row] = await this.db
      .update(workflowRuns)
      .set({
        status: 'running',
        leaseOwner: owner,
        leaseUntil: leaseUntil(leaseMs),
        claims: sql`${workflowRuns.claims} + 1`,
      })
      .where(
        sql`${workflowRuns.id} = (
          with running as (
            select user_id, count(*) as n from workflow_runs
            where status = 'running' and lease_until >= now()
            group by user_id
          )
          select r.id from workflow_runs r join workflows w on w.id = r.workflow_id
          left join running on running.user_id = r.user_id
          where ((r.status in ('queued', 'waiting') and r.available_at <= now()) or (r.status = 'running' and r.lease_until < now()))
            -- at most config.concurrency runs of one workflow at once; the rest wait queued
            and (
              w.config ->> 'concurrency' is null
              or (select count(*) from workflow_runs x
                  where x.workflow_id = r.workflow_id and x.status = 'running' and x.lease_until >= now())
                 < (w.config ->> 'concurrency')::int
            )
          order by coalesce(running.n, 0), r.available_at nulls first
          limit 1
          for update of r skip locked
        )`,
      )
      .returning();
    return row ?? null;
  }

  /**
   * The queue at a glance (metrics): runs queued (due or waiting for a retry delay), due (a worker
   * may take them now: queued and available, or orphaned by an expired lease), running under a live
   * lease, and how long the oldest due run has waited. One statement over the active runs only (the
   * partial queue index), however many finished runs the table holds.
   */
  async queueState(): Promise<QueueState> {
    // Due: what a worker may take now (the claim's own rule): queued and available, a waiting run
    // whose approval timed out, or a running one whose lease expired.
    const due = sql`((status in ('queued', 'waiting') and available_at <= now()) or (status = 'running' and lease_until < now()))`;
    const result = await this.db.execute(sql`
      select
        count(*) filter (where status = 'queued') as queued,
        count(*) filter (where ${due}) as due,
        count(*) filter (where status = 'running' and lease_until >= now()) as running,
        coalesce(extract(epoch from now() - min(case when status = 'running' then lease_until else available_at end)
          filter (where ${due})), 0) as oldest_due_seconds
      from ${workflowRuns}
      where status in ('queued', 'running', 'waiting')`);
    const row = rowsOf(result)[0] ?? {};
    return {
      queued: Number(row.queued ?? 0),
      due: Number(row.due ?? 0),
      running: Number(row.running ?? 0),
      oldestDueSeconds: Number(row.oldest_due_seconds ?? 0),
    };
  }

  /** Running runs of this data directory's previous process, which is known to be gone (PGlite). */
  async releaseAllRunning(): Promise<void> {
    await this.db
      .update(workflowRuns)
      .set({ leaseUntil: sql`now() - interval '1 second'` })
      .where(eq(workflowRuns.status, 'running'));
  }

  /** Puts a run back in the queue until `delayMs` from now (a retry waits here, not in memory). */
  async requeue(id: string, owner: string, progress: RunProgress, delayMs: number): Promise<boolean> {
    const rows = await this.db
      .update(workflowRuns)
      .set({
        ...progress,
        status: 'queued',
        leaseOwner: null,
        leaseUntil: null,
        // A deliberate wait is progress: the claims that count towards giving a run up start again.
        claims: 0,
        availableAt: sql`now() + ${`${delayMs} milliseconds`}::interval`,
      })
      .where(and(eq(workflowRuns.id, id), eq(workflowRuns.leaseOwner, owner)))
      .returning({ id: workflowRuns.id });
    return rows.length === 1;
  }

  /**
   * Resumes a run waiting at `step` with a decision (kept in its checkpoint for the step): queued,
   * due now. Null when the run is not waiting there, or was decided (or timed out) meanwhile.
   */
  async signalWaiting(
    id: string,
    step: string,
    signal: Record<string, unknown>,
  ): Promise<WorkflowRunRow | null> {
    if (!isUuid(id)) return null;
    const [row] = await this.db
      .update(workflowRuns)
      .set({
        checkpoint: sql`jsonb_set(${workflowRuns.checkpoint}, '{signal}', ${JSON.stringify(signal)}::jsonb)`,
        status: 'queued',
        availableAt: sql`now()`,
      })
      .where(
        and(
          eq(workflowRuns.id, id),
          eq(workflowRuns.status, 'waiting'),
          sql`${workflowRuns.checkpoint} -> 'waiting' ->> 'step' = ${step}`,
          sql`coalesce(${workflowRuns.checkpoint} -> 'signal', 'null'::jsonb) = 'null'::jsonb`,
        ),
      )
      .returning();
    return row ?? null;
  }

  async extendLease(id: string, owner: string, leaseMs: number): Promise<boolean> {
    const rows = await this.db
      .update(workflowRuns)
      .set({ leaseUntil: leaseUntil(leaseMs) })
      .where(and(eq(workflowRuns.id, id), eq(workflowRuns.leaseOwner, owner)))
      .returning({ id: workflowRuns.id });
    return rows.length === 1;
  }

  /**
   * What a drive that threw left behind (a stable code and a short message, never driver text): kept
   * in the run's message so that the run that is given up after WORKFLOW_MAX_CLAIMS names its cause.
   */
  async noteDriveFailure(id: string, owner: string, cause: string): Promise<void> {
    await this.db
      .update(workflowRuns)
      .set({ message: cause })
      .where(and(eq(workflowRuns.id, id), eq(workflowRuns.leaseOwner, owner)));
  }
}
