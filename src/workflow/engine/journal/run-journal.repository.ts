import { Inject, Injectable } from '@nestjs/common';
import { and, eq, inArray, sql, type SQL } from 'drizzle-orm';
import { isUuid } from '../../../common/validation/is-uuid';
import { DATABASE, type Database } from '../../../database/database.types';
import { rowsOf } from '../../../database/raw-rows';
import {
  composedOnce,
  executeParametrized,
  valuesOfBoth,
  type Parametrized,
} from '../../../database/built-statement';
import { workflowRuns } from '../../../database/schema';
import { effectsJson, insertEffects, type CommittedEffect } from '../../effects/workflow-effects.repository';
import type { NewRun, RunFinish, RunProgress, WorkflowRunRow } from '../model/run-records';
import { cancelledRunEvent } from './run-end';

const interval = (ms: number) => `${ms} milliseconds`;
const placeholder = sql.placeholder;

/**
 * What a new run is (id, workflow, caller, request, definition...), in the column order of both of
 * a run's first writes (`RUNNING_INSERT`, `INSERT_FINISHED`); its values are `newRunValues`.
 */
const NEW_RUN = sql`${placeholder('run_id')}::uuid, ${placeholder('run_workflow_id')}::uuid,
  ${placeholder('run_user_id')}::uuid, ${placeholder('run_site_id')}::uuid, ${placeholder('run_config_id')}::uuid,
  ${placeholder('run_request')}::jsonb, ${placeholder('run_started_at')}::timestamptz,
  ${placeholder('run_definition')}::jsonb, ${placeholder('run_definition_version')}::int,
  ${placeholder('run_rerun_of')}::uuid`;

function newRunValues(run: NewRun): Record<string, unknown> {
  return {
    run_id: run.id,
    run_workflow_id: run.workflowId,
    run_user_id: run.userId,
    run_site_id: run.siteId,
    run_config_id: run.configId,
    run_request: JSON.stringify(run.request),
    run_started_at: run.startedAt.toISOString(),
    run_definition: definitionText(run.definition),
    run_definition_version: run.definitionVersion,
    run_rerun_of: run.rerunOf,
  };
}

/**
 * A run's first write: `running` under this instance's lease, with its progress so far; its values
 * are `runningValues`. One template for both uses: run alone, or carried by another module's insert
 * (database/carried-write), which then answers what `answer` reads (see `insertRunningWrite`).
 */
const RUNNING_INSERT = sql`insert into ${workflowRuns} (id, workflow_id, user_id, site_id, config_id, request,
      started_at, definition, definition_version, rerun_of, next_step, step_in_flight, checkpoint, steps, data_id,
      status, lease_owner, lease_until)
    values (${NEW_RUN}, ${placeholder('run_next_step')}::int, ${placeholder('run_step_in_flight')}::int,
      ${placeholder('run_checkpoint')}::jsonb, ${placeholder('run_steps')}::jsonb, ${placeholder('run_data_id')}::uuid,
      'running', ${placeholder('run_lease_owner')}::text, now() + ${placeholder('run_lease')}::interval)`;

function runningValues(run: NewRun, owner: string, progress: RunProgress, leaseMs: number) {
  return Object.assign(newRunValues(run), {
    run_next_step: progress.nextStep,
    run_step_in_flight: progress.stepInFlight,
    run_checkpoint: JSON.stringify(progress.checkpoint),
    run_steps: JSON.stringify(progress.steps),
    run_data_id: progress.dataId,
    run_lease_owner: owner,
    run_lease: interval(leaseMs),
  });
}

/** The first write returning what `answer` (another module's part) reads, as column `answer`. */
const runningInsertAnswering = composedOnce(
  (answer: SQL) => sql`${RUNNING_INSERT} returning ${answer} as answer`,
);
const NO_ANSWER: Parametrized = { template: sql`null::jsonb`, values: {} };

/** The checkpoint: one call of a function whose plan PostgreSQL keeps (migration 0017). */
const CHECKPOINT = sql`select fdws_checkpoint_run(${placeholder('id')}::uuid, ${placeholder('owner')}::text,
  ${placeholder('nextStep')}::int, ${placeholder('stepInFlight')}::int, ${placeholder('checkpoint')}::jsonb,
  ${placeholder('steps')}::jsonb, ${placeholder('dataId')}::uuid, ${placeholder('lease')}::interval) as cancel_requested`;

/** How a run ended, in the argument order of both ends (`FINISH`, `INSERT_FINISHED`). */
const END = sql`${placeholder('status')}::text, ${placeholder('message')}::text, ${placeholder('steps')}::jsonb,
  ${placeholder('dataId')}::uuid, ${placeholder('durationMs')}::int, ${placeholder('checkpoint')}::jsonb`;

/** The values of `END`, and of what an end writes besides the run: the record's log entry, the effects. */
function endValues(
  outcome: RunFinish,
  logEntry: Record<string, unknown>,
  effects: CommittedEffect[],
): Record<string, unknown> {
  return {
    status: outcome.status,
    message: outcome.message,
    steps: JSON.stringify(outcome.steps),
    dataId: outcome.dataId,
    durationMs: outcome.durationMs,
    checkpoint: JSON.stringify(outcome.checkpoint),
    logEntry: JSON.stringify(logEntry),
    effects: effectsJson(effects),
  };
}

/** The end of a run this instance holds: one call of the end's one home (migration 0024). */
const FINISH = sql`select fdws_finish_run(${placeholder('id')}::uuid, ${placeholder('owner')}::text, ${END},
  ${placeholder('logEntry')}::jsonb, ${placeholder('effects')}::jsonb) as finished`;

/** A run that ended before any step with an effect, written once, finished (migration 0024). */
const INSERT_FINISHED = sql`select fdws_insert_finished_run(${NEW_RUN}, ${END},
  ${placeholder('finishedAt')}::timestamptz, ${placeholder('logEntry')}::jsonb, ${placeholder('effects')}::jsonb)`;

const definitionTexts = new WeakMap<object, string>();

/**
 * A run's definition as JSON text, made once per definition object: the runs of a workflow share
 * the object its cached row holds (a definition is never changed in place; an edit is a new row, so
 * a new object).
 */
function definitionText(definition: Record<string, unknown>): string {
  let text = definitionTexts.get(definition);
  if (text === undefined) {
    text = JSON.stringify(definition);
    definitionTexts.set(definition, text);
  }
  return text;
}

/**
 * The journal's writes of a run (engine/ARCHITECTURE.md): its first write, its checkpoints, its
 * pause, its end, and the cancel flag its drive reads. Each is a template with its values
 * (database/built-statement), made into text once and named where the pool keeps names; the
 * checkpoint and the end are calls of functions whose plans PostgreSQL keeps (migrations 0017 and
 * 0024). The first write usually rides in another statement (see `insertRunningWrite`).
 */
@Injectable()
export class RunJournalRepository {
  private readonly cancelRequestedStatement;

  constructor(@Inject(DATABASE) private readonly db: Database) {
    this.cancelRequestedStatement = db
      .select({ cancelRequested: workflowRuns.cancelRequested })
      .from(workflowRuns)
      .where(eq(workflowRuns.id, placeholder('id')))
      .prepare('workflow_run_cancel_requested');
  }

  /**
   * The first write of a run driven inside its request, made when its first step with an effect is
   * about to start: the run, its progress so far and its lease in one statement.
   */
  async insertRunning(run: NewRun, owner: string, progress: RunProgress, leaseMs: number): Promise<void> {
    await executeParametrized(this.db, {
      template: RUNNING_INSERT,
      values: runningValues(run, owner, progress, leaseMs),
    });
  }

  /**
   * The same first write as a statement another module's insert carries (database/carried-write),
   * so the run and that insert commit together; it answers `answer` (an expression another module
   * offers: the caller's account as this statement reads it), or null.
   */
  insertRunningWrite(
    run: NewRun,
    owner: string,
    progress: RunProgress,
    leaseMs: number,
    answer: Parametrized | null = null,
  ): Parametrized {
    const { template, values } = answer ?? NO_ANSWER;
    return {
      template: runningInsertAnswering(template),
      values: valuesOfBoth(runningValues(run, owner, progress, leaseMs), values),
    };
  }

  /**
   * A run driven inside its request that ended before any step with an effect: written once,
   * finished, by the end's one home (`fdws_insert_finished_run`, migration 0024), which also writes
   * the record's workflow-log entry, the held effects and the `workflow.run.finished` event.
   */
  async insertFinished(
    run: NewRun,
    outcome: RunFinish,
    logEntry: Record<string, unknown>,
    effects: CommittedEffect[] = [],
  ): Promise<void> {
    await executeParametrized(this.db, {
      template: INSERT_FINISHED,
      values: Object.assign(newRunValues(run), endValues(outcome, logEntry, effects), {
        finishedAt: new Date().toISOString(),
      }),
    });
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
    const rows = await executeParametrized(this.db, {
      template: CHECKPOINT,
      values: {
        id,
        owner,
        nextStep: progress.nextStep,
        stepInFlight: progress.stepInFlight,
        checkpoint: JSON.stringify(progress.checkpoint),
        steps: JSON.stringify(progress.steps),
        dataId: progress.dataId,
        lease: interval(leaseMs),
      },
    });
    const cancelRequested = rows[0]?.cancel_requested;
    return typeof cancelRequested === 'boolean' ? { cancelRequested } : null;
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
   * Ends a run this instance holds (`owner`, still running), in one call of the end's one home
   * (`fdws_finish_run`, migration 0024): the run's outcome, its entry in the workflow log of the
   * record it saved, the effects it committed to (into the outbox) and its `workflow.run.finished`
   * event. False, and nothing written, when the lease was lost: another instance drives the run.
   * A finished run is never resumed: its checkpoint keeps only what a re-run reuses (see runEnding).
   */
  async finish(
    id: string,
    owner: string,
    outcome: RunFinish,
    logEntry: Record<string, unknown>,
    effects: CommittedEffect[] = [],
  ): Promise<boolean> {
    const rows = await executeParametrized(this.db, {
      template: FINISH,
      values: Object.assign({ id, owner }, endValues(outcome, logEntry, effects)),
    });
    return rows[0]?.finished === true;
  }

  /**
   * Marks a run for cancellation; a queued run is cancelled at once; a waiting one is queued, due
   * now, so a worker ends it (compensating first when its strategy is rollback). Returns the run
   * after the change, or null when it was not active (or does not exist).
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
    return changed ?? null;
  }

  /** The run's status as stored (a retried write checks whether its first try committed). */
  async statusOf(id: string): Promise<string | null> {
    const [row] = await this.db
      .select({ status: workflowRuns.status })
      .from(workflowRuns)
      .where(eq(workflowRuns.id, id))
      .limit(1);
    return row?.status ?? null;
  }

  async isCancelRequested(id: string): Promise<boolean> {
    const [row] = await this.cancelRequestedStatement.execute({ id });
    return row?.cancelRequested ?? false;
  }
}
