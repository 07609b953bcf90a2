import { Inject, Injectable, Logger } from '@nestjs/common';
import { buildRequestContext, type RequestContext } from '../../common/context/request-context';
import { AppError } from '../../common/errors/app-error';
import { causeChain } from '../../common/errors/cause-chain';
import { Translator } from '../../common/i18n/translator.service';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import type { QueuedRunDto, WorkflowResultDto } from '../dto/workflow-response.dto';
import { workflowLogEntry } from './journal/run-end';
import { RunJournalRepository } from './journal/run-journal.repository';
import { RunQueueRepository, type TriggeredEnqueue } from './queue/run-queue.repository';
import { WorkflowMetrics } from '../workflow-metrics';
import { WorkflowsService } from '../definitions/workflows.service';
import type { WorkflowRow } from '../definitions/workflows.repository';
import { CompiledDefinitions, type DefinitionSource } from './compiled-definitions';
import { envSecrets, redact } from './model/redaction';
import { RunDriver } from './driver/run-driver';
import { DatabaseRunJournal, DryRunJournal, type RunJournal } from './journal/run-journal';
import { RunLauncher, type LaunchedRun } from './run-launcher';
import type { ExecuteBody, RunRequest } from './model/run-model';
import type { NewRun, WorkflowRunRow } from './model/run-records';
import { applySeed, type RerunBody } from './run-replay';
import { DEFAULT_RUN_TIMEOUT_MS, type RunSession } from './driver/run-session';
import { RunState } from './model/run-state';
import { engineFailure, toStepFailure } from './driver/step-failure';
import { parseCheckpoint, parseDefinition, parseRunRequest, parseStepLogs } from './model/stored-state';
import { WORKFLOW_INSTANCE } from './queue/workflow-instance';

export type { ExecuteBody } from './model/run-model';
export type { RerunBody } from './run-replay';

/** The definition a launched run runs with. */
function sourceOf(run: NewRun): DefinitionSource {
  return { id: run.workflowId, version: run.definitionVersion, config: run.definition };
}

/**
 * Runs workflows: inside the request (the default), from the queue (`Prefer: respond-async`, and every run
 * whose process died), or dry. It only assembles a drive: the RunLauncher checks and prepares a run,
 * a RunJournal owns its writes and lease (DryRunJournal writes nothing), and the RunDriver runs the
 * steps (StepExecutor, Compensator). Handlers get the caller's context, so a step can never do what
 * the caller could not do through the API.
 */
@Injectable()
export class WorkflowRunner {
  private readonly logger = new Logger(WorkflowRunner.name);
  private readonly envAllowlist: ReadonlySet<string>;

  constructor(
    private readonly launcher: RunLauncher,
    private readonly driver: RunDriver,
    private readonly workflows: WorkflowsService,
    private readonly definitions: CompiledDefinitions,
    private readonly runs: RunJournalRepository,
    private readonly queue: RunQueueRepository,
    private readonly translator: Translator,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(WORKFLOW_INSTANCE) private readonly instance: string,
    private readonly metrics: WorkflowMetrics,
  ) {
    this.envAllowlist = new Set(config.workflowEnvAllowlist);
  }

  /** Runs inside the request: 404/403/422 when it cannot start, else the result whether it succeeded or not. */
  async execute(ctx: RequestContext, workflowId: string, body: ExecuteBody): Promise<WorkflowResultDto> {
    return this.driveLaunched(ctx, await this.launcher.launch(ctx, workflowId, body, 'sync'));
  }

  /** Queues the run (`Prefer: respond-async`); any instance sharing the database takes it. */
  async enqueue(ctx: RequestContext, workflowId: string, body: ExecuteBody): Promise<QueuedRunDto> {
    return this.queueLaunched(await this.launcher.launch(ctx, workflowId, body, 'async'));
  }

  /**
   * Queues the run an event triggers (see WorkflowTriggerConsumer) under `runId`, derived from the
   * chain's root event and the workflow: a second call for the same pair stores nothing. The
   * caller's checks are those of `enqueue`; instead of the per-user queue bound, the bounds of
   * triggered runs apply (WORKFLOW_TRIGGER_MAX_RUNS_PER_EVENT, WORKFLOW_TRIGGER_MAX_QUEUED_PER_USER).
   * Answers whether the run was queued, or which rule kept it out.
   */
  async enqueueTriggered(
    ctx: RequestContext,
    workflowId: string,
    body: ExecuteBody,
    triggered: Required<Pick<RunRequest, 'trigger'>> & Pick<RunRequest, 'savedData'>,
    runId: string,
  ): Promise<TriggeredEnqueue> {
    const launched = await this.launcher.launch(ctx, workflowId, body, 'async', triggered);
    const run = { ...launched.run, id: runId, triggerRoot: triggered.trigger.rootEventId };
    const outcome = await this.queue.enqueueTriggered(run, this.queuedProgress(launched), {
      maxRunsPerEvent: this.config.workflowTriggerMaxRunsPerEvent,
      maxQueuedPerUser: this.config.workflowTriggerMaxQueuedPerUser,
    });
    if (outcome === 'queued') this.metrics.runStarted(launched.workflow.id, 'async');
    return outcome;
  }

  /**
   * Re-runs a finished run (see RunLauncher.relaunch) as a new run linked to it, inside the request
   * or, `async`, through the queue; the steps before the chosen point are taken over, not run.
   */
  async rerun(
    ctx: RequestContext,
    runId: string,
    body: RerunBody,
    async: boolean,
    newRunId?: string,
  ): Promise<WorkflowResultDto | QueuedRunDto> {
    const launched = await this.launcher.relaunch(ctx, runId, body, async ? 'async' : 'sync', newRunId);
    return async ? this.queueLaunched(launched) : this.driveLaunched(ctx, launched);
  }

  private async driveLaunched(ctx: RequestContext, launched: LaunchedRun): Promise<WorkflowResultDto> {
    const { run, request, workflow, seed } = launched;
    this.metrics.runStarted(workflow.id, 'sync');
    const state = this.freshState(launched);
    const journal = this.journal(run.id, state, { unwritten: run });
    // The caller's own context: what the request already looked up (its form access) is not read again.
    const session = this.session(workflow, sourceOf(run), request, state, ctx, journal, {
      nextStep: seed.nextStep,
      stepInFlight: null,
    });
    return (await this.driver.drive({ ...session, callerCheckedAt: performance.now() }, this.secrets()))!;
  }

  private async queueLaunched(launched: LaunchedRun): Promise<QueuedRunDto> {
    const { run } = launched;
    const progress = this.queuedProgress(launched);
    const max = this.config.workflowMaxQueuedPerUser;
    if (!(await this.queue.enqueueWithinBound(run, progress, max)))
      throw new AppError('WORKFLOW_QUEUE_FULL', { details: { maxQueuedPerUser: max } });
    this.metrics.runStarted(launched.workflow.id, 'async');
    return { runId: run.id, status: 'queued' };
  }

  /** What a queued run is stored with: its state before the first step (a re-run's taken-over steps). */
  private queuedProgress(launched: LaunchedRun) {
    const state = this.freshState(launched);
    return {
      checkpoint: { ...state.snapshot() },
      nextStep: launched.seed.nextStep,
      steps: redact(state.logs, this.secrets()),
      dataId: state.checkpoint.dataId,
    };
  }

  /** A new run's state; a re-run's holds the steps it takes over. */
  private freshState({ request, workflow, startedAt, seed }: LaunchedRun): RunState {
    const state = RunState.fresh(request, workflow.name, startedAt);
    applySeed(state, seed);
    return state;
  }

  /**
   * Drives a run this instance claimed from the queue (queued, retry due, or orphaned by a dead
   * process). A run claimed more than WORKFLOW_MAX_CLAIMS times (it failed to run each time) is
   * given up: it ends `failed` with WORKFLOW_RUN_CRASHED and the cause its last drive left.
   */
  async resume(row: WorkflowRunRow): Promise<void> {
    if (row.claims > this.config.workflowMaxClaims) return this.giveUp(row);
    const workflow = await this.workflows.findForRun(row.workflowId);
    const request = parseRunRequest(row.request);
    const state = new RunState(
      request,
      workflow.name,
      parseStepLogs(row.steps),
      parseCheckpoint(row.checkpoint),
    );
    const journal = this.journal(row.id, state, row);
    // The definition the run started with (runs older than kept definitions: the workflow's own).
    const source: DefinitionSource =
      row.definition && row.definitionVersion !== null
        ? { id: workflow.id, version: row.definitionVersion, config: row.definition }
        : workflow;
    const ctx = buildRequestContext({
      user: request.actor,
      siteId: request.siteId,
      locale: request.locale,
      requestId: request.requestId,
    });
    const resumedAt = { nextStep: row.nextStep, stepInFlight: row.stepInFlight };
    const session = this.session(workflow, source, request, state, ctx, journal, resumedAt);
    await this.driver.drive(session, this.secrets(), true);
  }

  /**
   * Runs the pure steps (validate, transform, conditional) and only renders the others, reporting
   * what they would store, mail and send. Nothing is stored, not even a run record.
   */
  async dryRun(ctx: RequestContext, workflowId: string, body: ExecuteBody): Promise<WorkflowResultDto> {
    const { request, workflow, startedAt } = await this.launcher.launch(ctx, workflowId, body, 'sync');
    const state = RunState.fresh(request, workflow.name, startedAt);
    const session = this.session(workflow, workflow, request, state, ctx, new DryRunJournal(), {
      nextStep: 0,
      stepInFlight: null,
    });
    return (await this.driver.drive(
      { ...session, callerCheckedAt: performance.now(), dryRun: true },
      this.secrets(),
    ))!;
  }

  /**
   * A drive of a claimed run threw (the database unreachable past WORKFLOW_DB_RETRY_MS, a damaged
   * row, a bug): the cause goes to the log with the run id, and a stable code and short message to
   * the run, for the day it is given up. The run resumes when its lease expires.
   */
  async recordDriveFailure(row: WorkflowRunRow, error: unknown): Promise<void> {
    this.logger.error({
      msg: `workflow ${row.workflowId} run ${row.id} failed to run: ${causeChain(error)}`,
      workflowId: row.workflowId,
      runId: row.id,
    });
    const failure = toStepFailure(error, (appError) =>
      this.translator.translate(appError.messageKey, 'en', appError.params),
    );
    await this.queue
      .noteDriveFailure(row.id, this.instance, `${failure.code}: ${failure.message}`)
      .catch(() => undefined);
  }

  private async giveUp(row: WorkflowRunRow): Promise<void> {
    const translate = (error: AppError) => this.translator.translate(error.messageKey, 'en', error.params);
    const failure = engineFailure('WORKFLOW_RUN_CRASHED', translate, { params: { claims: row.claims - 1 } });
    const cause = row.message ? ` Last cause: ${row.message}` : '';
    this.logger.warn({
      msg: `workflow ${row.workflowId} run ${row.id} given up after ${row.claims - 1} claims (${failure.code})${cause}`,
      workflowId: row.workflowId,
      runId: row.id,
      status: 'failed',
      code: failure.code,
    });
    const finished = await this.runs.finish(
      row.id,
      this.instance,
      {
        status: 'failed',
        message: `Workflow failed: ${failure.message}${cause}`,
        steps: parseStepLogs(row.steps),
        dataId: row.dataId,
        durationMs: Math.max(0, Date.now() - row.startedAt.getTime()),
        checkpoint: row.checkpoint ?? {},
      },
      workflowLogEntry({ runId: row.id, workflowId: row.workflowId, status: 'failed' }),
    );
    if (finished) this.metrics.runFinished(row.workflowId, 'failed');
    else this.logger.warn(`workflow run ${row.id}: lost its lease while it was given up`);
  }

  private journal(
    runId: string,
    state: RunState,
    stored: ConstructorParameters<typeof DatabaseRunJournal>[5],
  ) {
    return new DatabaseRunJournal(
      runId,
      this.runs,
      this.queue,
      state,
      {
        owner: this.instance,
        leaseMs: this.config.workflowLeaseMs,
        dbRetryMs: this.config.workflowDbRetryMs,
        secrets: this.secrets(),
      },
      stored,
    );
  }

  private session(
    workflow: WorkflowRow,
    source: DefinitionSource,
    request: RunRequest,
    state: RunState,
    ctx: RequestContext,
    journal: RunJournal,
    resumedAt: RunSession['resumedAt'],
  ): RunSession {
    const definition = parseDefinition(source.config);
    // Time spent waiting for a decision (so far, and in the wait that ends now) is not the run's own.
    const { pausedMs = 0, waiting } = state.checkpoint;
    const paused = pausedMs + (waiting ? Math.max(0, Date.now() - waiting.since) : 0);
    return {
      journal,
      workflow: { id: workflow.id, name: workflow.name },
      definition,
      compiled: this.definitions.stepsOf(source),
      request,
      ctx,
      // A claimed or resumed run is checked again before it does anything.
      callerCheckedAt: null,
      deadline: state.checkpoint.startedAt + paused + (definition.timeoutMs ?? DEFAULT_RUN_TIMEOUT_MS),
      resumedAt,
      state,
      env: { allowlist: this.envAllowlist, values: process.env },
      dryRun: false,
      translate: (error) => this.translator.translate(error.messageKey, request.locale, error.params),
    };
  }

  /** Every allow-listed env value: redacted wherever it appears, also in runs resumed after a crash. */
  private secrets(): Set<string> {
    return envSecrets(this.envAllowlist);
  }
}
