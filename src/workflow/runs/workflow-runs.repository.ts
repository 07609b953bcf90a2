import { Inject, Injectable } from '@nestjs/common';
import { and, count, desc, eq, gte, inArray, isNull, lt, sql, type SQL } from 'drizzle-orm';
import { siteCondition, type SiteScope } from '../../common/context/site-scope';
import { isUuid } from '../../common/validation/is-uuid';
import { appendToWorkflowLog } from '../../data/record-workflow-log';
import { DATABASE, type Database } from '../../database/database.types';
import { rowsOf } from '../../database/raw-rows';
import { workflowRuns } from '../../database/schema';
import { insertEffects, type CommittedEffect } from '../effects/workflow-effects.repository';
import type { NewRun, RunFinish, RunProgress, WorkflowRunRow } from '../engine/model/run-records';
import { cancelledRunEvent, finishedRunEvent, insertedRunEvent } from '../engine/journal/run-end';

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

/** Which runs a bulk operation takes: statuses, started in [from, to), of one user. */
export interface RunFilter {
  statuses: string[];
  from?: Date;
  to?: Date;
  userId?: string;
}

/** A transaction-scoped advisory lock on a name (released at commit or rollback). */
const advisoryLock = (name: string) => sql`select pg_advisory_xact_lock(hashtextextended(${name}, 0))`;
const leaseUntil = (leaseMs: number) => sql`now() + ${interval(leaseMs)}::interval`;
const interval = (ms: number) => `${ms} milliseconds`;
const placeholder = sql.placeholder;

/**
 * A run's first write: `running` under this instance's lease, with its progress so far. One text
 * for both uses: run alone, or carried by another module's insert (database/carried-write), which
 * cannot take a prepared statement.
 */
function runningInsert(run: NewRun, owner: string, progress: RunProgress, leaseMs: number): SQL {
  return sql`insert into ${workflowRuns} (id, workflow_id, user_id, site_id, config_id, request, started_at,
      definition, definition_version, rerun_of, next_step, step_in_flight, checkpoint, steps, data_id, status,
      lease_owner, lease_until)
    values (${run.id}::uuid, ${run.workflowId}::uuid, ${run.userId}::uuid, ${run.siteId}::uuid, ${run.configId}::uuid,
      ${json(run.request)}, ${run.startedAt.toISOString()}::timestamptz, ${json(run.definition)},
      ${run.definitionVersion}::int, ${run.rerunOf}::uuid, ${progress.nextStep}::int, ${progress.stepInFlight}::int,
      ${json(progress.checkpoint)}, ${json(progress.steps)}, ${progress.dataId}::uuid, 'running',
      ${owner}, now() + ${interval(leaseMs)}::interval)`;
}

/**
 * A run written once, finished. Spelled out rather than built by the query builder, which took
 * about 0.2 ms of CPU per run to build it (a workflow without any step with an effect ends here).
 */
function finishedInsert(run: NewRun, outcome: RunFinish, finishedAt: Date): SQL {
  return sql`insert into ${workflowRuns} (id, workflow_id, user_id, site_id, config_id, request, started_at,
      definition, definition_version, rerun_of, status, message, steps, data_id, duration_ms, checkpoint, finished_at)
    values (${run.id}::uuid, ${run.workflowId}::uuid, ${run.userId}::uuid, ${run.siteId}::uuid, ${run.configId}::uuid,
      ${json(run.request)}, ${run.startedAt.toISOString()}::timestamptz, ${json(run.definition)},
      ${run.definitionVersion}::int, ${run.rerunOf}::uuid, ${outcome.status}, ${outcome.message},
      ${json(outcome.steps)}, ${outcome.dataId}::uuid, ${outcome.durationMs}::int, ${json(outcome.checkpoint)},
      ${finishedAt.toISOString()}::timestamptz)`;
}

/** A value as a jsonb parameter. */
function json(value: unknown): SQL {
  return sql`${JSON.stringify(value)}::jsonb`;
}

/**
 * Run records, which are also the queue of durable runs (`FOR UPDATE SKIP LOCKED`, leases). The
 * cancellation read is a prepared statement, built once here; the checkpoint and the usual end are
 * calls of functions whose plans PostgreSQL keeps (migrations 0016 and 0017); the first write is
 * built per run, as it usually rides in another statement (see `insertRunningWrite`).
 */
@Injectable()
export class WorkflowRunsRepository {
  private readonly cancelRequestedStatement;

  constructor(@Inject(DATABASE) private readonly db: Database) {
    this.cancelRequestedStatement = db
      .select({ cancelRequested: workflowRuns.cancelRequested })
      .from(workflowRuns)
      .where(eq(workflowRuns.id, placeholder('id')))
      .prepare('workflow_run_cancel_requested');
  }

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
   * The first write of a run driven inside its request, made when its first step with an effect is
   * about to start: the run, its progress so far and its lease in one statement.
   */
  async insertRunning(run: NewRun, owner: string, progress: RunProgress, leaseMs: number): Promise<void> {
    await this.db.execute(runningInsert(run, owner, progress, leaseMs));
  }

  /**
   * The same first write as a statement another module's insert carries (database/carried-write),
   * so the run and that insert commit together.
   */
  insertRunningWrite(run: NewRun, owner: string, progress: RunProgress, leaseMs: number): SQL {
    return runningInsert(run, owner, progress, leaseMs);
  }

  /**
   * A run driven inside its request that ended before any step with an effect: written once,
   * finished (with the entry of the record's workflow log, should a step have provided one, and its
   * `workflow.run.finished` event).
   */
  async insertFinished(
    run: NewRun,
    outcome: RunFinish,
    logEntry: Record<string, unknown>,
    effects: CommittedEffect[] = [],
  ): Promise<void> {
    const finishedAt = new Date();
    const written = [
      ...(outcome.dataId
        ? [sql`logged as (${appendToWorkflowLog(outcome.dataId, JSON.stringify(logEntry))})`]
        : []),
      ...(effects.length > 0 ? [sql`outboxed as (${insertEffects(sql`${run.id}::uuid`, effects)})`] : []),
      sql`announced as (${insertedRunEvent(run, outcome, finishedAt)})`,
    ];
    await this.db.execute(
      sql`with ${sql.join(written, sql`, `)} ${finishedInsert(run, outcome, finishedAt)}`,
    );
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

  /**
   * Commits the run's progress and renews its lease; answers whether cancellation was requested
   * meanwhile (so no separate read is needed), or null when the lease was lost.
   */
  async checkpoint(
    id: string,
    owner: string,
    progress: RunProgress,
    leaseMs: number,
  ): Promise<{ cancelRequested: boolean } | null> {
    // One call of a function whose plan PostgreSQL keeps (migration 0017).
    const result = await this.db.execute(sql`select fdws_checkpoint_run(${id}::uuid, ${owner}::text,
      ${progress.nextStep}::int, ${progress.stepInFlight}::int, ${JSON.stringify(progress.checkpoint)}::jsonb,
      ${JSON.stringify(progress.steps)}::jsonb, ${progress.dataId}::uuid, ${interval(leaseMs)}::interval) as cancel_requested`);
    const cancelRequested = rowsOf(result)[0]?.cancel_requested;
    return typeof cancelRequested === 'boolean' ? { cancelRequested } : null;
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
   * Stores a run this instance holds as `waiting` (see RunJournal.pause) in one statement with the
   * waiting step's effects; taken again by the queue at `until`, or at once after a decision.
   */
  async pause(
    id: string,
    owner: string,
    progress: RunProgress,
    until: Date | null,
    effects: CommittedEffect[],
  ): Promise<boolean> {
    // A cancel that came after the run last read its flag: queued again at once (its driver then
    // cancels it), and the waiting step's effects (its notify mail) are not stored.
    const pausedId = sql`(select id from paused where status = 'waiting')`;
    const outboxed = effects.length > 0 ? sql`, outboxed as (${insertEffects(pausedId, effects)})` : sql``;
    const result = await this.db.execute(sql`
      with paused as (
        update ${workflowRuns}
        set status = case when cancel_requested then 'queued' else 'waiting' end,
          next_step = ${progress.nextStep}, step_in_flight = null,
          checkpoint = ${JSON.stringify(progress.checkpoint)}::jsonb, steps = ${JSON.stringify(progress.steps)}::jsonb,
          data_id = ${progress.dataId}::uuid, lease_owner = null, lease_until = null, claims = 0,
          available_at = case when cancel_requested then now() else ${until?.toISOString() ?? null}::timestamptz end
        where id = ${id}::uuid and lease_owner = ${owner} and status = 'running'
        returning id, status
      )${outboxed}
      select count(*)::int as paused from paused`);
    return Number(rowsOf(result)[0]?.paused) === 1;
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
   * Ends a run this instance holds (`owner`, still running), in one statement: the run's outcome,
   * its entry in the workflow log of the record it saved, the effects it committed to (into the
   * outbox) and its `workflow.run.finished` event. False, and nothing written, when the lease was lost: another instance drives the run.
   * A finished run is never resumed: its checkpoint keeps only what a re-run reuses (see
   * runEnding).
   */
  async finish(
    id: string,
    owner: string,
    outcome: RunFinish,
    logEntry: Record<string, unknown>,
    effects: CommittedEffect[] = [],
  ): Promise<boolean> {
    if (effects.length === 0) {
      // The usual end: one call of a function whose plans PostgreSQL keeps (migration 0016).
      const result = await this.db.execute(sql`select fdws_finish_run(${id}::uuid, ${owner}::text,
          ${outcome.status}::text, ${outcome.message}::text, ${JSON.stringify(outcome.steps)}::jsonb,
          ${outcome.dataId}::uuid, ${outcome.durationMs}::int, ${JSON.stringify(outcome.checkpoint)}::jsonb,
          ${JSON.stringify(logEntry)}::jsonb) as finished`);
      return rowsOf(result)[0]?.finished === true;
    }
    const finishedId = sql`(select id from finished)`;
    const logged = outcome.dataId
      ? sql`, logged as (${appendToWorkflowLog(sql`(select ${outcome.dataId}::uuid from finished)`, JSON.stringify(logEntry))})`
      : sql``;
    const outboxed = effects.length > 0 ? sql`, outboxed as (${insertEffects(finishedId, effects)})` : sql``;
    const result = await this.db.execute(sql`
      with finished as (
        update ${workflowRuns}
        set status = ${outcome.status}, message = ${outcome.message}, steps = ${JSON.stringify(outcome.steps)}::jsonb,
          data_id = ${outcome.dataId}::uuid, duration_ms = ${outcome.durationMs}, finished_at = now(),
          checkpoint = ${JSON.stringify(outcome.checkpoint)}::jsonb, lease_owner = null, lease_until = null, step_in_flight = null
        where id = ${id}::uuid and lease_owner = ${owner} and status = 'running'
        returning *
      )${logged}${outboxed}, announced as (${finishedRunEvent()})
      select count(*)::int as finished from finished`);
    return Number(rowsOf(result)[0]?.finished) === 1;
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

  /**
   * Marks a run for cancellation; a queued run is cancelled at once; a waiting one is queued, due
   * now, so a worker ends it (compensating first when its strategy is rollback). Returns the run
   * after the change.
   */
  async requestCancel(id: string): Promise<WorkflowRunRow | null> {
    if (!isUuid(id)) return null;
    // One update, so a run changing state meanwhile (pausing, being claimed) cannot fall between
    // the cases: a queued run that never started ends here; a waiting one is queued to end in its
    // drive (compensated there with rollback); a running one is flagged for its drive.
    const neverStarted = sql`${workflowRuns.status} = 'queued' and ${workflowRuns.nextStep} = 0`;
    const changed = await this.db.transaction(async (tx) => {
      const [updated] = await tx
        .update(workflowRuns)
        .set({
          status: sql`case when ${neverStarted} then 'cancelled' when ${workflowRuns.status} = 'waiting' then 'queued' else ${workflowRuns.status} end`,
          finishedAt: sql`case when ${neverStarted} then now() else ${workflowRuns.finishedAt} end`,
          message: sql`case when ${neverStarted} then 'Workflow cancelled before it started' else ${workflowRuns.message} end`,
          cancelRequested: sql`not (${neverStarted})`,
          availableAt: sql`case when ${workflowRuns.status} = 'waiting' then now() else ${workflowRuns.availableAt} end`,
        })
        .where(and(eq(workflowRuns.id, id), inArray(workflowRuns.status, ['queued', 'running', 'waiting'])))
        .returning();
      // A run that ends here ends like any other: with its `workflow.run.finished` event, in the same transaction.
      if (updated?.status === 'cancelled') await tx.execute(cancelledRunEvent(updated.id));
      return updated;
    });
    return changed ?? this.findById(id);
  }

  async isCancelRequested(id: string): Promise<boolean> {
    const [row] = await this.cancelRequestedStatement.execute({ id });
    return row?.cancelRequested ?? false;
  }

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
