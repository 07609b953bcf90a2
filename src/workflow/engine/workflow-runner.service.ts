import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import {
  buildRequestContext,
  requireUser,
  type AuthUser,
  type RequestContext,
} from '../../common/context/request-context';
import { siteOfNewRecord } from '../../common/context/site-scope';
import { AppError } from '../../common/errors/app-error';
import type { Locale } from '../../common/i18n/locale';
import { Translator } from '../../common/i18n/translator.service';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { AdminNotifier } from '../../mail/admin-notifier.service';
import { MailService } from '../../mail/mail.service';
import { FormAccessService } from '../../permissions/form-access.service';
import type { OnErrorStrategy, WorkflowConfigDto, WorkflowStepDto } from '../dto/workflow-definition.dto';
import type { QueuedRunDto, RunStatus, WorkflowResultDto } from '../dto/workflow-response.dto';
import { StepError } from '../steps/step-error';
import type { StepContext, StepOutcome } from '../steps/step-handler';
import { WorkflowRunsRepository, type NewRun, type WorkflowRunRow } from '../workflow-runs.repository';
import { WorkflowsService } from '../workflows.service';
import type { WorkflowRow } from '../workflows.repository';
import { CompiledDefinitions, type CompiledStep } from './compiled-definitions';
import { conditionMet } from './condition';
import { parseContextPath, readSegments } from './context-path';
import { envSecrets, redact } from './redaction';
import { storableFailure, unstorableReason } from './storable-value';
import { RunCaller } from './run-caller';
import { delayBeforeAttempt, retryPolicyOf } from './retry-policy';
import { RunState, type AttemptLog, type RunCheckpoint, type StepLog } from './run-state';
import { StepRegistry, type RegisteredStep } from './step-registry.service';
import { toStepFailure, type StepFailure } from './step-failure';
import { asText, renderDeep, renderTemplate, type TemplateEnv } from './template';
import { WorkflowClock } from './workflow-clock';
import { WORKFLOW_INSTANCE } from './workflow-instance';

const DEFAULT_RUN_TIMEOUT_MS = 5 * 60_000;
const CANCEL_POLL_MS = 1000;

/** What a run was started with; stored on the run record so any instance can drive it. */
interface RunRequest {
  configId: string;
  data: Record<string, unknown>;
  formTitle: string | null;
  actor: AuthUser;
  siteId: string | null;
  locale: Locale;
  requestId: string;
  mode: 'sync' | 'async';
}

type FinalStatus = Exclude<RunStatus, 'running' | 'queued'>;

/** What is stored of a run when the runner starts driving it (a new run has nothing stored yet). */
type StoredRun = Pick<
  WorkflowRunRow,
  'id' | 'workflowId' | 'request' | 'checkpoint' | 'steps' | 'nextStep' | 'stepInFlight' | 'cancelRequested'
>;

/** The run's row as this drive knows it, so that writes are made only where a crash needs them. */
interface RunRecord {
  id: string;
  /**
   * A run driven inside its request is written when its first step with an effect starts, or when it
   * ends: before that a crash loses nothing (no effect happened) and nobody can see or cancel it.
   */
  unwritten: NewRun | null;
  /** Where the stored run left off; a step in flight then may have had its effect. */
  resumedAt: { nextStep: number; stepInFlight: number | null };
  /** The row still marks a non-replayable step in flight; the next write clears or moves the marker. */
  markedInFlight: boolean;
  /** The cancellation flag as the last write (or claim) of the run read it, while no step has run since; else null. */
  cancelFlag: boolean | null;
}

interface Drive {
  run: RunRecord;
  workflow: WorkflowRow;
  definition: WorkflowConfigDto;
  /** Per step of the definition, what is the same at every run (see CompiledDefinitions). */
  compiled: CompiledStep[];
  request: RunRequest;
  /** The caller's context, replaced by a fresh one at each re-check of the caller (RunCaller). */
  ctx: RequestContext;
  /** The caller was checked and nothing ran since (the request's own check, or a re-check). */
  callerChecked: boolean;
  /** When the run's `config.timeoutMs` is up (clock time); attempts and retry waits end there. */
  deadline: number;
  state: RunState;
  env: TemplateEnv;
}

type StepResult =
  | { kind: 'success'; outcome: StepOutcome; log: StepLog }
  | { kind: 'failure'; failure: StepFailure; log: StepLog }
  | { kind: 'skipped'; log: StepLog }
  | { kind: 'requeued' }
  | { kind: 'cancelled' }
  /** Ends the run `failed` whatever `onError` says: its time is up, or its caller lost the right. */
  | { kind: 'fatal'; failure: StepFailure; log: StepLog };

/**
 * Runs workflows: inside the request (the default) or from the queue (`Prefer: respond-async`, and every
 * run whose process died). Steps run in order behind their conditions, with retries, `onError`
 * (stop, continue, rollback with reverse-order compensation), held mail and redaction. The run's
 * checkpoint is committed wherever a crash could otherwise repeat an effect (see
 * `cancelledBeforeEffect`), so another process can resume it without doing anything twice. Handlers
 * get the caller's context, so a step can never do what the caller could not do through the API.
 */
@Injectable()
export class WorkflowRunner {
  private readonly logger = new Logger(WorkflowRunner.name);
  private readonly envAllowlist: ReadonlySet<string>;

  constructor(
    private readonly workflows: WorkflowsService,
    private readonly formAccess: FormAccessService,
    private readonly registry: StepRegistry,
    private readonly definitions: CompiledDefinitions,
    private readonly runs: WorkflowRunsRepository,
    private readonly mail: MailService,
    private readonly adminNotifier: AdminNotifier,
    private readonly clock: WorkflowClock,
    private readonly translator: Translator,
    private readonly caller: RunCaller,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(WORKFLOW_INSTANCE) private readonly instance: string,
  ) {
    this.envAllowlist = new Set(config.workflowEnvAllowlist);
  }

  /** Runs inside the request: 404/403/422 when it cannot start, else the result whether it succeeded or not. */
  async execute(ctx: RequestContext, workflowId: string, body: ExecuteBody): Promise<WorkflowResultDto> {
    const { run, checkpoint, workflow } = await this.prepare(ctx, workflowId, body, 'sync');
    const stored: StoredRun = {
      ...run,
      checkpoint,
      steps: [],
      nextStep: 0,
      stepInFlight: null,
      cancelRequested: false,
    };
    // The caller's own context: what the request already looked up (its form access) is not read again.
    return (await this.drive(stored, { unwritten: run, workflow, ctx }))!;
  }

  /** Queues the run (`Prefer: respond-async`); any instance sharing the database takes it. */
  async enqueue(ctx: RequestContext, workflowId: string, body: ExecuteBody): Promise<QueuedRunDto> {
    const { run, checkpoint } = await this.prepare(ctx, workflowId, body, 'async');
    const max = this.config.workflowMaxQueuedPerUser;
    if (!(await this.runs.enqueueWithinBound(run, checkpoint, max)))
      throw new AppError('WORKFLOW_QUEUE_FULL', { details: { maxQueuedPerUser: max } });
    return { runId: run.id, status: 'queued' };
  }

  /** Drives a run this instance claimed from the queue (queued, retry due, or orphaned by a dead process). */
  async resume(run: WorkflowRunRow): Promise<void> {
    await this.drive(run);
  }

  /**
   * Runs the pure steps (validate, transform, conditional) and only renders the others, reporting
   * what they would store, mail and send. Nothing is stored, not even a run record.
   */
  async dryRun(ctx: RequestContext, workflowId: string, body: ExecuteBody): Promise<WorkflowResultDto> {
    const { workflow, formTitle, user } = await this.checkStart(ctx, workflowId, body);
    const definition = workflow.config as unknown as WorkflowConfigDto;
    const state = this.newState(body, formTitle, user, workflow);
    const env = this.envOf();
    let success = true;
    for (const [index, step] of definition.steps.entries()) {
      const registered = this.registry.get(step.type);
      if (!registered) continue;
      if (step.condition !== undefined && !this.safeConditionMet(step.condition, state)) {
        state.logs.push(skippedLog(step));
        continue;
      }
      const rendered = renderDeep(
        step.config ?? {},
        state.templateScope(),
        env,
        new Set(registered.options.rawFields),
      );
      if (!registered.options.pure) {
        const result = { dryRun: true, wouldRun: { type: step.type, config: rendered } };
        state.scope.results[step.name] = result;
        state.logs.push({ ...skippedLog(step), status: 'success', result });
        continue;
      }
      const context = this.stepContext(ctx, 'dry-run', workflow, body.configId, step, index, state, env);
      const outcome = await this.attempt(
        context,
        registered,
        plainToInstance(registered.options.config, rendered),
        step,
      );
      if ('failure' in outcome) {
        state.logs.push(failedLog(step, outcome.failure, [], 0));
        success = false;
        if ((step.onError ?? definition.errorHandling?.strategy ?? 'stop') !== 'continue') break;
        continue;
      }
      state.scope.results[step.name] = outcome.outcome.result;
      Object.assign(state.scope, outcome.outcome.provides ?? {});
      state.logs.push({
        ...skippedLog(step),
        status: 'success',
        result: outcome.outcome.result ?? null,
        attempts: 1,
      });
    }
    return redact(
      {
        success,
        message: success ? 'Dry run: nothing was stored, mailed or sent' : 'Dry run: a step would fail',
        workflowId: workflow.id,
        workflowName: workflow.name,
        runId: null as unknown as string,
        status: success ? 'success' : 'failed',
        steps: state.logs,
        data: null,
        results: state.scope.results,
      },
      this.secrets(),
    );
  }

  private async checkStart(ctx: RequestContext, workflowId: string, body: ExecuteBody) {
    const user = requireUser(ctx);
    const workflow = await this.workflows.requireRunnable(ctx, workflowId);
    const { config: form } = await this.formAccess.require(ctx, body.configId, 'executeWorkflows');
    return { user, workflow, form, formTitle: form.title };
  }

  /** What a run starts with: checked (404/403), not stored yet. */
  private async prepare(
    ctx: RequestContext,
    workflowId: string,
    body: ExecuteBody,
    mode: RunRequest['mode'],
  ): Promise<{ run: NewRun; checkpoint: Record<string, unknown>; workflow: WorkflowRow }> {
    const { user, workflow, form } = await this.checkStart(ctx, workflowId, body);
    const request: RunRequest = {
      configId: form.id,
      data: body.data,
      formTitle: form.title,
      actor: user,
      siteId: ctx.siteId,
      locale: ctx.locale,
      requestId: ctx.requestId,
      mode,
    };
    const startedAt = this.clock.now();
    const checkpoint: RunCheckpoint = {
      scope: { input: body.data, results: {} },
      completed: [],
      heldMail: [],
      lastFailure: null,
      pendingRetry: null,
      startedAt,
    };
    const run: NewRun = {
      id: randomUUID(),
      workflowId: workflow.id,
      userId: user.userId,
      // The site of the records it saves: the form's, else (a shared form) the request's.
      siteId: siteOfNewRecord(ctx, form.siteId),
      configId: form.id,
      request: request as unknown as Record<string, unknown>,
      startedAt: new Date(startedAt),
    };
    return { run, checkpoint: checkpoint as unknown as Record<string, unknown>, workflow };
  }

  /**
   * Runs from the checkpoint to the end, or until a retry is queued; the result when the run ended.
   * A run started in this request passes its definition, its context and its row not written yet.
   */
  private async drive(
    stored: StoredRun,
    started?: { unwritten: NewRun; workflow: WorkflowRow; ctx: RequestContext },
  ): Promise<WorkflowResultDto | null> {
    const workflow = started?.workflow ?? (await this.workflows.findForRun(stored.workflowId));
    const request = stored.request as unknown as RunRequest;
    const checkpoint = stored.checkpoint as unknown as RunCheckpoint;
    const definition = workflow.config as unknown as WorkflowConfigDto;
    const ctx =
      started?.ctx ??
      buildRequestContext({
        user: request.actor,
        siteId: request.siteId,
        locale: request.locale,
        requestId: request.requestId,
      });
    const state = new RunState(
      {
        ...checkpoint.scope,
        user: { id: request.actor.userId, email: request.actor.email, role: request.actor.role },
        formTitle: request.formTitle,
        workflowName: workflow.name,
      },
      (stored.steps ?? []) as StepLog[],
      checkpoint,
    );
    const run: RunRecord = {
      id: stored.id,
      unwritten: started?.unwritten ?? null,
      resumedAt: { nextStep: stored.nextStep, stepInFlight: stored.stepInFlight },
      markedInFlight: stored.stepInFlight !== null,
      cancelFlag: stored.cancelRequested,
    };
    const drive: Drive = {
      run,
      workflow,
      definition,
      compiled: this.definitions.stepsOf(workflow),
      request,
      ctx,
      // A run started in this request was just checked by it; a claimed or resumed run is checked again.
      callerChecked: started !== undefined,
      deadline: checkpoint.startedAt + (definition.timeoutMs ?? DEFAULT_RUN_TIMEOUT_MS),
      state,
      env: this.envOf(),
    };
    const heartbeat = setInterval(
      () => {
        if (run.unwritten) return;
        this.runs.extendLease(run.id, this.instance, this.config.workflowLeaseMs).catch(() => undefined);
      },
      Math.max(500, Math.floor(this.config.workflowLeaseMs / 3)),
    );
    heartbeat.unref();
    try {
      return await this.driveSteps(drive);
    } finally {
      clearInterval(heartbeat);
    }
  }

  private async driveSteps(drive: Drive): Promise<WorkflowResultDto | null> {
    const { run, definition, state } = drive;
    if (!drive.callerChecked) {
      const refused = await this.callerRefused(drive);
      if (refused) {
        const step = definition.steps[Math.min(run.resumedAt.nextStep, definition.steps.length - 1)];
        return this.endFatally(drive, step, refused, failedLog(step, refused, [], 0));
      }
    }
    for (let index = run.resumedAt.nextStep; index < definition.steps.length; index++) {
      const step = definition.steps[index];
      if (this.clock.now() >= drive.deadline) {
        const failure = timeoutFailure(definition);
        return this.endFatally(drive, step, failure, failedLog(step, failure, [], 0));
      }
      const result = await this.runOneStep(drive, step, index);
      if (result.kind === 'requeued') return null;
      if (result.kind === 'cancelled') return this.cancel(drive);
      if (result.kind === 'fatal') return this.endFatally(drive, step, result.failure, result.log);
      state.logs.push(result.log);
      // Nothing is written here: the progress goes into the next write the run needs anyway (before
      // the next step with an effect, or its end). A crash before that re-runs only replayable steps
      // and reports a non-replayable one as interrupted, so no effect is ever repeated.
      if (result.kind === 'skipped') continue;
      if (result.kind === 'success') {
        state.scope.results[step.name] = result.outcome.result;
        Object.assign(state.scope, result.outcome.provides ?? {});
        state.checkpoint.completed.push({
          index,
          result: result.outcome.result,
          provided: Object.keys(result.outcome.provides ?? {}),
        });
        continue;
      }
      if (result.kind === 'failure') {
        if (result.failure.provides) Object.assign(state.scope, pickScopeEntries(result.failure.provides));
        state.checkpoint.lastFailure = { name: step.name, failure: result.failure };
        const strategy: OnErrorStrategy = step.onError ?? definition.errorHandling?.strategy ?? 'stop';
        if (strategy === 'continue') continue;
        if (strategy === 'rollback') {
          await this.compensate(drive);
          return this.finish(drive, 'rolled_back', state.checkpoint.lastFailure);
        }
        // Mail held by earlier steps still goes out when a run stops; only a rollback drops it.
        await this.sendHeldMail(drive);
        return this.finish(drive, 'failed', state.checkpoint.lastFailure);
      }
    }
    const undelivered = await this.sendHeldMail(drive);
    return this.finish(
      drive,
      undelivered ? 'failed' : 'success',
      undelivered ?? state.checkpoint.lastFailure,
    );
  }

  /** One step: its condition, the crash rule for a step that was in flight, then its attempts. */
  private async runOneStep(drive: Drive, step: WorkflowStepDto, index: number): Promise<StepResult> {
    const { run, state } = drive;
    const registered = this.registry.get(step.type);
    if (!registered) {
      const failure = unknownType(step.type);
      return { kind: 'failure', failure, log: failedLog(step, failure, [], 0) };
    }
    const pending = state.checkpoint.pendingRetry?.index === index ? state.checkpoint.pendingRetry : null;
    const interrupted = !pending && run.resumedAt.stepInFlight === index && index === run.resumedAt.nextStep;
    if (interrupted && !registered.options.replayable) {
      // Its process died while it ran: it may have had its effect, so it is not silently repeated.
      const failure: StepFailure = {
        code: 'INTERRUPTED',
        message: 'the step was interrupted by a crash and is not replayable',
        retryable: false,
      };
      return { kind: 'failure', failure, log: { ...failedLog(step, failure, [], 0), status: 'interrupted' } };
    }
    if (!pending && step.condition !== undefined && !this.safeConditionMet(step.condition, state)) {
      return { kind: 'skipped', log: skippedLog(step) };
    }
    if (!registered.options.pure && !drive.callerChecked) {
      const refused = await this.callerRefused(drive);
      if (refused) return { kind: 'fatal', failure: refused, log: failedLog(step, refused, [], 0) };
    }
    if (!registered.options.pure && (await this.cancelledBeforeEffect(drive, index, registered)))
      return { kind: 'cancelled' };
    const result = await this.attempts(drive, step, index, registered, pending);
    run.cancelFlag = null;
    drive.callerChecked = false;
    return result;
  }

  /**
   * Re-reads the caller (RunCaller) and takes the fresh context; the failure that ends the run when
   * they may no longer run it. An unreachable database is not a refusal: it is thrown, and the run
   * resumes once its lease expires.
   */
  private async callerRefused(drive: Drive): Promise<StepFailure | null> {
    try {
      drive.ctx = await this.caller.recheck(drive.request, drive.workflow.id);
      drive.callerChecked = true;
      return null;
    } catch (error) {
      if (!(error instanceof AppError) || error.status >= 500) throw error;
      return {
        ...toStepFailure(error, (appError) => this.translateError(appError, drive.ctx)),
        retryable: false,
      };
    }
  }

  /** Ends the run `failed` at `step`; mail held by earlier steps is dropped (nothing more happens for the run). */
  private endFatally(
    drive: Drive,
    step: WorkflowStepDto,
    failure: StepFailure,
    log: StepLog,
  ): Promise<WorkflowResultDto> {
    drive.state.logs.push(log);
    drive.state.checkpoint.heldMail = [];
    return this.finish(drive, 'failed', { name: step.name, failure });
  }

  /**
   * Before a step with an effect: commits the progress where a crash needs it and learns whether the
   * run was cancelled. A write is made when the run is not stored yet, when the step is not
   * replayable (the in-flight marker lets a resumed run tell that it may have had its effect) or
   * when the row still marks an earlier step in flight; the write reads the cancellation flag too.
   * Otherwise the flag is read on its own, unless the last write read it and no step ran since.
   */
  private async cancelledBeforeEffect(
    drive: Drive,
    index: number,
    registered: RegisteredStep,
  ): Promise<boolean> {
    const { run } = drive;
    if (run.unwritten || !registered.options.replayable || run.markedInFlight) {
      await this.commit(drive, index, registered.options.replayable ? null : index);
    } else if (run.cancelFlag === null) {
      run.cancelFlag = await this.runs.isCancelRequested(run.id);
    }
    return run.cancelFlag === true;
  }

  private async attempts(
    drive: Drive,
    step: WorkflowStepDto,
    index: number,
    registered: RegisteredStep,
    pending: RunCheckpoint['pendingRetry'],
  ): Promise<StepResult> {
    const { definition, state, env } = drive;
    const policy = retryPolicyOf(definition.retry, step.retry);
    const attemptLog: AttemptLog[] = pending?.attemptLog ?? [];
    const stepStarted = pending?.stepStartedAt ?? this.clock.now();
    const { rawFields, fixedConfigProblems } = drive.compiled[index];
    const rendered = fixedConfigProblems
      ? (step.config ?? {})
      : renderDeep(step.config ?? {}, state.templateScope(), env, rawFields);
    const problems = fixedConfigProblems ?? this.registry.configProblems(step.type, rendered, 'config');
    if (problems.length > 0) {
      const failure: StepFailure = {
        code: 'INVALID_STEP_CONFIG',
        message: 'the rendered step config is not valid',
        retryable: false,
        details: { validationErrors: problems },
      };
      return {
        kind: 'failure',
        failure,
        log: failedLog(step, failure, attemptLog, this.clock.now() - stepStarted),
      };
    }
    const config = plainToInstance(registered.options.config, rendered);
    const context = this.stepContext(
      drive.ctx,
      drive.run.id,
      drive.workflow,
      drive.request.configId,
      step,
      index,
      state,
      env,
    );
    let retryAfterMs: number | undefined;
    for (let attempt = pending?.attempt ?? 1; attempt <= policy.maxAttempts; attempt++) {
      const waitedInQueue = pending !== null && attempt === pending.attempt;
      const delayMs = waitedInQueue ? pending.delayMs : delayBeforeAttempt(policy, attempt, retryAfterMs);
      if (delayMs > 0 && !waitedInQueue && this.clock.now() + delayMs >= drive.deadline) {
        // The attempt after the wait would start past the run's deadline: the run ends now instead.
        const failure = timeoutFailure(definition);
        return {
          kind: 'fatal',
          failure,
          log: failedLog(step, failure, attemptLog, this.clock.now() - stepStarted),
        };
      }
      if (delayMs > 0 && !waitedInQueue) {
        if (drive.request.mode === 'async') {
          // The wait is kept in the queue, not in memory: a crash meanwhile loses nothing.
          state.checkpoint.pendingRetry = { index, attempt, delayMs, attemptLog, stepStartedAt: stepStarted };
          attemptLog.at(-1)!.error += ` (next attempt in ${delayMs} ms)`;
          await this.runs.requeue(drive.run.id, this.instance, this.progress(drive, index, null), delayMs);
          drive.run.markedInFlight = false;
          return { kind: 'requeued' };
        }
        if (!(await this.waitUnlessCancelled(drive.run.id, delayMs))) return { kind: 'cancelled' };
      }
      if (attempt > 1 && (await this.runs.isCancelRequested(drive.run.id))) return { kind: 'cancelled' };
      if (attempt > 1 && !waitedInQueue && !registered.options.pure) {
        // Time passed since the caller was checked (a wait, an attempt): they may have lost the right.
        const refused = await this.callerRefused(drive);
        if (refused)
          return {
            kind: 'fatal',
            failure: refused,
            log: failedLog(step, refused, attemptLog, this.clock.now() - stepStarted),
          };
      }
      state.checkpoint.pendingRetry = null;
      const attemptStarted = this.clock.now();
      const outcome = await this.attempt({ ...context, ctx: drive.ctx, attempt }, registered, config, step, {
        at: drive.deadline,
        failure: () => timeoutFailure(definition),
      });
      if ('outcome' in outcome) {
        attemptLog.push({
          attempt,
          status: 'success',
          delayMs,
          durationMs: this.clock.now() - attemptStarted,
        });
        return {
          kind: 'success',
          outcome: outcome.outcome,
          log: {
            name: step.name,
            type: step.type,
            status: 'success',
            result: outcome.outcome.result ?? null,
            attempts: attemptLog.length,
            durationMs: this.clock.now() - stepStarted,
            attemptLog,
          },
        };
      }
      const failure = outcome.failure;
      attemptLog.push({
        attempt,
        status: 'failed',
        delayMs,
        durationMs: this.clock.now() - attemptStarted,
        error: `${failure.code}: ${failure.message}`,
      });
      if (outcome.runTimedOut)
        return {
          kind: 'fatal',
          failure,
          log: failedLog(step, failure, attemptLog, this.clock.now() - stepStarted),
        };
      if (!failure.retryable || attempt === policy.maxAttempts)
        return {
          kind: 'failure',
          failure,
          log: failedLog(step, failure, attemptLog, this.clock.now() - stepStarted),
        };
      retryAfterMs = failure.retryAfterMs;
    }
    throw new Error('unreachable: the attempt loop always returns');
  }

  /**
   * One call of the handler, bounded by the step's `timeoutMs` and by the run's deadline (then
   * aborted, `runTimedOut`). A result the run could not store fails the attempt (see storable-value).
   */
  private async attempt(
    context: StepContext,
    registered: RegisteredStep,
    config: object,
    step: WorkflowStepDto,
    deadline?: { at: number; failure: () => StepFailure },
  ): Promise<{ outcome: StepOutcome } | { failure: StepFailure; runTimedOut?: boolean }> {
    const controller = new AbortController();
    const runLeft = deadline ? Math.max(0, deadline.at - this.clock.now()) : Infinity;
    const runEnds = runLeft < (step.timeoutMs ?? Infinity);
    const limitMs = Math.min(step.timeoutMs ?? Infinity, runLeft);
    let timer: NodeJS.Timeout | undefined;
    try {
      const execution = registered.handler.execute({ ...context, signal: controller.signal }, config);
      const outcome = Number.isFinite(limitMs)
        ? await Promise.race([
            execution,
            new Promise<never>((_, reject) => {
              timer = setTimeout(() => {
                controller.abort();
                reject(
                  runEnds
                    ? new RunTimedOut()
                    : new StepError(`the step took longer than ${step.timeoutMs} ms`, {
                        code: 'TIMEOUT',
                        retryable: true,
                      }),
                );
              }, limitMs);
            }),
          ])
        : await execution;
      const problem = unstorableReason(outcome.result) ?? unstorableReason(outcome.provides);
      if (problem)
        return {
          failure: {
            code: 'RESULT_NOT_STORABLE',
            message: `the step's result cannot be stored: it ${problem}`,
            retryable: false,
          },
        };
      return { outcome };
    } catch (error) {
      if (error instanceof RunTimedOut) return { failure: deadline!.failure(), runTimedOut: true };
      return {
        failure: storableFailure(
          toStepFailure(error, (appError) => this.translateError(appError, context.ctx)),
        ),
      };
    } finally {
      if (timer) clearTimeout(timer);
    }
  }

  /** Sleeps out a retry delay in the request; false when the run was cancelled meanwhile. */
  private async waitUnlessCancelled(runId: string, delayMs: number): Promise<boolean> {
    const controller = new AbortController();
    const watch = setInterval(() => {
      this.runs
        .isCancelRequested(runId)
        .then((cancelled) => cancelled && controller.abort(new Error('cancelled')))
        .catch(() => undefined);
    }, CANCEL_POLL_MS);
    watch.unref();
    try {
      await this.clock.sleep(delayMs, controller.signal);
      return true;
    } catch {
      return false;
    } finally {
      clearInterval(watch);
    }
  }

  /** Cancelled: compensated first when the workflow's strategy is rollback. */
  private async cancel(drive: Drive): Promise<WorkflowResultDto> {
    if (drive.definition.errorHandling?.strategy === 'rollback') await this.compensate(drive);
    drive.state.checkpoint.heldMail = [];
    return this.finish(drive, 'cancelled', null);
  }

  /** Reverse order; a failing compensation is logged and the others still run. */
  private async compensate(drive: Drive): Promise<void> {
    const { state, definition } = drive;
    for (const done of [...state.checkpoint.completed].reverse()) {
      const step = definition.steps[done.index];
      const registered = this.registry.get(step.type);
      const log = state.logs.find((entry) => entry.name === step.name);
      if (!registered || !log || log.status !== 'success') continue;
      const dropped = state.checkpoint.heldMail.filter((held) => held.index === done.index).length;
      state.checkpoint.heldMail = state.checkpoint.heldMail.filter((held) => held.index !== done.index);
      if (registered.handler.compensate) {
        const context = this.stepContext(
          drive.ctx,
          drive.run.id,
          drive.workflow,
          drive.request.configId,
          step,
          done.index,
          state,
          drive.env,
        );
        const config = plainToInstance(
          registered.options.config,
          renderDeep(
            step.config ?? {},
            state.templateScope(),
            drive.env,
            new Set(registered.options.rawFields ?? []),
          ),
        );
        try {
          const outcome = await registered.handler.compensate(context, config, done.result);
          log.status = outcome.status;
          log.compensation = outcome.detail ?? null;
          // What an undone step produced (the saved record) is no longer the run's outcome.
          if (outcome.status === 'compensated')
            for (const key of done.provided) delete (state.scope as unknown as Record<string, unknown>)[key];
        } catch (error) {
          const failure = toStepFailure(error, (appError) => this.translateError(appError, drive.ctx));
          log.status = 'not_compensable';
          log.compensation = { error: { code: failure.code, message: failure.message } };
        }
      } else if (dropped > 0) {
        log.status = 'compensated';
        log.compensation = { mailDropped: dropped };
      } else if (!registered.options.pure) {
        log.status = 'not_compensable';
      }
    }
    state.checkpoint.heldMail = [];
  }

  /** Sends the run's held mail; the first step whose mail could not be delivered fails the run. */
  private async sendHeldMail(drive: Drive): Promise<{ name: string; failure: StepFailure } | null> {
    const { state, definition } = drive;
    let firstFailure: { name: string; failure: StepFailure } | null = null;
    for (const held of state.checkpoint.heldMail) {
      try {
        await this.mail.send(held.mail);
      } catch (error) {
        const failure = {
          ...toStepFailure(error, () => 'mail delivery failed'),
          code: 'MAIL_DELIVERY_FAILED',
        };
        const log = state.logs.find((entry) => entry.name === definition.steps[held.index].name);
        if (log) {
          log.status = 'failed';
          log.error = { code: failure.code, message: failure.message };
        }
        firstFailure ??= { name: definition.steps[held.index].name, failure };
      }
    }
    state.checkpoint.heldMail = [];
    return firstFailure;
  }

  private async finish(
    drive: Drive,
    status: FinalStatus,
    failedStep: { name: string; failure: StepFailure } | null,
  ): Promise<WorkflowResultDto> {
    const { state, workflow, definition, run } = drive;
    const savedData = state.scope.savedData ?? null;
    const dataId = typeof savedData?._id === 'string' ? savedData._id : null;
    const result = redact(
      {
        success: status === 'success',
        message: messageOf(status, failedStep),
        workflowId: workflow.id,
        workflowName: workflow.name,
        runId: run.id,
        status,
        steps: state.logs,
        data: savedData,
        results: state.scope.results,
      },
      this.secrets(),
    );
    const outcome = {
      status,
      message: result.message,
      steps: result.steps,
      dataId,
      durationMs: Math.max(0, Math.round(this.clock.now() - state.checkpoint.startedAt)),
    };
    const logEntry = {
      runId: run.id,
      workflowId: workflow.id,
      workflowName: workflow.name,
      status,
      at: new Date().toISOString(),
      steps: result.steps.map(({ name, type, status: stepStatus }) => ({ name, type, status: stepStatus })),
    };
    if (run.unwritten) {
      await this.runs.insertFinished(run.unwritten, outcome, logEntry);
      run.unwritten = null;
    } else {
      await this.runs.finish(run.id, outcome, logEntry);
    }
    run.markedInFlight = false;
    if ((status === 'failed' || status === 'rolled_back') && definition.errorHandling?.notify) {
      await this.adminNotifier.notifyFailure({
        workflowName: workflow.name,
        workflowId: workflow.id,
        runId: run.id,
        stepName: failedStep?.name ?? null,
        error: redact(
          { code: failedStep?.failure.code, message: failedStep?.failure.message },
          this.secrets(),
        ),
      });
    }
    return result;
  }

  /**
   * Commits the checkpoint (the step log, the scope, the next step and the step now in flight) and
   * reads the cancellation flag with it; the run's first write when it is not stored yet.
   */
  private async commit(drive: Drive, nextStep: number, stepInFlight: number | null): Promise<void> {
    const { run } = drive;
    const progress = this.progress(drive, nextStep, stepInFlight);
    if (run.unwritten) {
      await this.runs.insertRunning(run.unwritten, this.instance, progress, this.config.workflowLeaseMs);
      run.unwritten = null;
      run.cancelFlag = false;
    } else {
      const kept = await this.runs.checkpoint(run.id, this.instance, progress, this.config.workflowLeaseMs);
      if (!kept) throw new Error(`workflow run ${run.id} is no longer held by this instance`);
      run.cancelFlag = kept.cancelRequested;
    }
    run.markedInFlight = stepInFlight !== null;
  }

  private progress(drive: Drive, nextStep: number, stepInFlight: number | null) {
    const savedData = drive.state.scope.savedData;
    return {
      nextStep,
      stepInFlight,
      checkpoint: drive.state.snapshot() as unknown as Record<string, unknown>,
      steps: redact(drive.state.logs, this.secrets()),
      dataId: typeof savedData?._id === 'string' ? savedData._id : null,
    };
  }

  private newState(body: ExecuteBody, formTitle: string, user: AuthUser, workflow: WorkflowRow): RunState {
    return new RunState(
      {
        input: body.data,
        results: {},
        user: { id: user.userId, email: user.email, role: user.role },
        formTitle,
        workflowName: workflow.name,
      },
      [],
      {
        scope: { input: body.data, results: {} },
        completed: [],
        heldMail: [],
        lastFailure: null,
        pendingRetry: null,
        startedAt: this.clock.now(),
      },
    );
  }

  private stepContext(
    ctx: RequestContext,
    runId: string,
    workflow: WorkflowRow,
    configId: string,
    step: WorkflowStepDto,
    index: number,
    state: RunState,
    env: TemplateEnv,
  ): StepContext {
    return {
      ctx,
      runId,
      workflowId: workflow.id,
      workflowName: workflow.name,
      configId,
      step: { name: step.name, type: step.type, index },
      attempt: 1,
      scope: state.scope,
      signal: new AbortController().signal,
      read: (path) => {
        const parsed = parseContextPath(path);
        if ('problem' in parsed || parsed.segments[0] === 'env') return undefined;
        return readSegments(state.scope, parsed.segments);
      },
      render: (template, options = {}) =>
        asText(renderTemplate(template, state.templateScope(options.extra), env, { escape: options.escape })),
      holdMail: (mail) => state.hold(index, mail),
    };
  }

  private envOf(): TemplateEnv {
    return { allowlist: this.envAllowlist, values: process.env, resolved: new Set() };
  }

  /** Every allow-listed env value: redacted wherever it appears, also in runs resumed after a crash. */
  private secrets(): Set<string> {
    return envSecrets(this.envAllowlist);
  }

  /** A condition that cannot be evaluated (a rule over a limit) counts as not met. */
  private safeConditionMet(condition: WorkflowStepDto['condition'], state: RunState): boolean {
    try {
      return conditionMet(condition!, state.templateScope());
    } catch (error) {
      this.logger.warn(`workflow condition could not be evaluated: ${(error as Error).message}`);
      return false;
    }
  }

  private translateError(error: AppError, ctx: RequestContext): string {
    return this.translator.translate(error.messageKey, ctx.locale, error.params);
  }
}

export interface ExecuteBody {
  configId: string;
  data: Record<string, unknown>;
}

function messageOf(status: FinalStatus, failedStep: { name: string; failure: StepFailure } | null): string {
  if (status === 'cancelled') return 'Workflow cancelled';
  if (status === 'success')
    return failedStep
      ? `Workflow completed; step "${failedStep.name}" failed and was continued past`
      : 'Workflow completed';
  const what = status === 'rolled_back' ? 'Workflow rolled back' : 'Workflow failed';
  return `${what}: step "${failedStep?.name}" failed: ${failedStep?.failure.message}`;
}

/** Only the entries a step may produce; a failure never replaces `input`, `results` or `user`. */
function pickScopeEntries(provides: Record<string, unknown>): Record<string, unknown> {
  const allowed = ['savedData', 'validationResult', 'computedResults'];
  return Object.fromEntries(Object.entries(provides).filter(([key]) => allowed.includes(key)));
}

/** The run's `config.timeoutMs` is up. */
function timeoutFailure(definition: WorkflowConfigDto): StepFailure {
  const timeoutMs = definition.timeoutMs ?? DEFAULT_RUN_TIMEOUT_MS;
  return { code: 'WORKFLOW_TIMEOUT', message: `the run took longer than ${timeoutMs} ms`, retryable: false };
}

/** The run's deadline ended an attempt (never leaves `attempt`). */
class RunTimedOut extends Error {}

function unknownType(type: string): StepFailure {
  return {
    code: 'UNKNOWN_STEP_TYPE',
    message: `the step type "${type}" is not registered`,
    retryable: false,
  };
}

function skippedLog(step: WorkflowStepDto): StepLog {
  return { name: step.name, type: step.type, status: 'skipped', result: null, attempts: 0, durationMs: 0 };
}

function failedLog(
  step: WorkflowStepDto,
  failure: StepFailure,
  attempts: AttemptLog[],
  durationMs: number,
): StepLog {
  return {
    name: step.name,
    type: step.type,
    status: 'failed',
    result: null,
    error: {
      code: failure.code,
      message: failure.message,
      ...(failure.details !== undefined ? { details: failure.details } : {}),
    },
    attempts: attempts.length,
    durationMs,
    attemptLog: attempts,
  };
}
