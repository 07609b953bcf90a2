import { Injectable, Logger } from '@nestjs/common';
import { AdminNotifier } from '../../../mail/admin-notifier.service';
import { EffectDispatcher } from '../../effects/effect-dispatcher.service';
import { Compensator } from './compensator';
import { conditionMet } from '../model/condition';
import { redact } from '../model/redaction';
import type { OnErrorStrategy, StepDefinition, StepLog } from '../model/run-model';
import { runEnding, waitingResult, type FailedStep, type FinalStatus, type RunResult } from './run-outcome';
import { callerCheckHolds, type RunSession, type StepResult } from './run-session';
import { StepExecutor } from './step-executor';
import { engineFailure, type StepFailure } from './step-failure';
import { stepInFlightAhead } from './in-flight-ahead';
import { failedLog, skippedLog } from './step-logs';
import { StepRegistry } from '../step-registry.service';
import { WorkflowMetrics } from '../../workflow-metrics';
import { inSpan, markFailed, RUN_ATTRIBUTES } from './run-tracing';
import { WorkflowClock } from '../workflow-clock';

/**
 * The step loop, the same for every run (inside the request, from the queue, resumed, dry): each
 * step behind its condition and the crash rule for a step that was in flight, the caller's re-check
 * and the cancellation check before a step with an effect (RunJournal), the step itself
 * (StepExecutor), then `onError` (stop, continue, rollback through the Compensator). Every write
 * goes through the session's journal, so a dry run (whose journal writes nothing) is this loop too.
 */
@Injectable()
export class RunDriver {
  private readonly logger = new Logger(RunDriver.name);

  constructor(
    private readonly registry: StepRegistry,
    private readonly executor: StepExecutor,
    private readonly compensator: Compensator,
    private readonly dispatcher: EffectDispatcher,
    private readonly adminNotifier: AdminNotifier,
    private readonly clock: WorkflowClock,
    private readonly metrics: WorkflowMetrics,
  ) {}

  /**
   * Runs from where the session starts to the end, or until a retry is queued (null). The drive is
   * one span: inside the request, a child of the request's span; `claimed` from the queue, the root
   * of its own trace, linked to the request that queued the run.
   */
  async drive(session: RunSession, secrets: ReadonlySet<string>, claimed = false): Promise<RunResult | null> {
    const attributes = {
      [RUN_ATTRIBUTES.runId]: session.journal.runId ?? 'dry-run',
      [RUN_ATTRIBUTES.workflowId]: session.workflow.id,
      [RUN_ATTRIBUTES.mode]: session.dryRun ? 'dry' : session.request.mode,
      [RUN_ATTRIBUTES.requestId]: session.request.requestId,
    };
    const link = { root: claimed, linkTo: claimed ? session.request.traceparent : undefined };
    return inSpan(
      'workflow.run',
      attributes,
      async (span) => {
        try {
          const result = await this.driveSteps(session, secrets);
          span.setAttribute(RUN_ATTRIBUTES.status, result?.status ?? 'queued');
          if (result && (result.status === 'failed' || result.status === 'rolled_back'))
            markFailed(span, [...result.steps].reverse().find((log) => log.error)?.error?.code);
          return result;
        } finally {
          session.journal.close();
        }
      },
      link,
    );
  }

  private async driveSteps(session: RunSession, secrets: ReadonlySet<string>): Promise<RunResult | null> {
    const { definition, state, resumedAt } = session;
    const end = (status: FinalStatus, failed: FailedStep) => this.end(session, status, failed, secrets);
    if (session.callerCheckedAt === null) {
      const refused = await this.executor.callerRefused(session);
      const step = definition.steps[Math.min(resumedAt.nextStep, definition.steps.length - 1)];
      if (refused) return this.endFatally(session, step, refused, failedLog(step, refused, [], 0), secrets);
    }
    for (let index = resumedAt.nextStep; index < definition.steps.length; index++) {
      const step = definition.steps[index];
      if (this.clock.now() >= session.deadline) {
        const failure = this.executor.runTimeout(session);
        return this.endFatally(session, step, failure, failedLog(step, failure, [], 0), secrets);
      }
      const result = await this.tracedStep(session, step, index);
      if (result.kind === 'requeued') return null;
      if (result.kind === 'waiting') return this.pause(session, index, result, secrets);
      this.endWait(session, index);
      if (result.kind === 'cancelled') {
        if (definition.errorHandling?.strategy === 'rollback') await this.compensator.compensate(session);
        state.dropEffects();
        return end('cancelled', null);
      }
      if (result.kind === 'fatal') return this.endFatally(session, step, result.failure, result.log, secrets);
      state.logs.push(result.log);
      // Nothing is written here: the progress goes into the next write the run needs anyway (before
      // the next step with an effect, or its end). A crash before that re-runs only replayable steps
      // and reports a non-replayable one as interrupted, so no effect is ever repeated.
      if (result.kind === 'success') {
        state.scope.results[step.name] = result.result;
        const provided = state.provide(result.provides);
        state.hold(result.effects);
        const values = Object.fromEntries(provided.map((key) => [key, state.scope[key]]));
        state.checkpoint.completed.push({ index, name: step.name, result: result.result, provided, values });
      } else if (result.kind === 'failure') {
        if (result.failure.result !== undefined) state.scope.results[step.name] = result.failure.result;
        state.provide(result.failure.provides);
        state.checkpoint.lastFailure = { name: step.name, failure: result.failure };
        const strategy: OnErrorStrategy = step.onError ?? definition.errorHandling?.strategy ?? 'stop';
        if (strategy === 'rollback') {
          await this.compensator.compensate(session);
          return end('rolled_back', state.checkpoint.lastFailure);
        }
        // Effects held by earlier steps still happen when a run stops; only a rollback drops them.
        if (strategy === 'stop') return end('failed', state.checkpoint.lastFailure);
      }
    }
    return end('success', state.checkpoint.lastFailure);
  }

  /** One step in its span (its attempts' spans inside), counted in the step-duration histogram. */
  private tracedStep(session: RunSession, step: StepDefinition, index: number): Promise<StepResult> {
    const attributes = {
      [RUN_ATTRIBUTES.runId]: session.journal.runId ?? 'dry-run',
      [RUN_ATTRIBUTES.workflowId]: session.workflow.id,
      [RUN_ATTRIBUTES.step]: step.name,
      [RUN_ATTRIBUTES.stepType]: step.type,
      [RUN_ATTRIBUTES.requestId]: session.request.requestId,
    };
    return inSpan('workflow.step', attributes, async (span) => {
      const result = await this.runStep(session, step, index);
      if ('log' in result) {
        span.setAttribute(RUN_ATTRIBUTES.status, result.log.status);
        if (!session.dryRun && result.log.status !== 'skipped')
          this.metrics.stepFinished(step.type, result.log.status, result.log.durationMs);
      } else span.setAttribute(RUN_ATTRIBUTES.status, result.kind);
      if (result.kind === 'failure' || result.kind === 'fatal') markFailed(span, result.failure.code);
      return result;
    });
  }

  /** One step: the crash rule for a step that was in flight, its condition, the checks before an effect. */
  private async runStep(session: RunSession, step: StepDefinition, index: number): Promise<StepResult> {
    const { state, resumedAt, journal } = session;
    const registered = this.registry.get(step.type);
    if (!registered) {
      const failure = engineFailure('UNKNOWN_STEP_TYPE', session.translate, { params: { type: step.type } });
      return { kind: 'failure', failure, log: failedLog(step, failure, [], 0) };
    }
    const pending = state.checkpoint.pendingRetry?.index === index ? state.checkpoint.pendingRetry : null;
    // The mark may be ahead of the step the run resumes at (stepInFlightAhead): the steps before it
    // are replayed, and it is reported here.
    const interrupted = !pending && resumedAt.stepInFlight === index;
    if (interrupted && !registered.options.replayable) {
      // Its process died while it ran: it may have had its effect, so it is not silently repeated.
      const failure = engineFailure('INTERRUPTED', session.translate);
      return { kind: 'failure', failure, log: { ...failedLog(step, failure, [], 0), status: 'interrupted' } };
    }
    if (!pending && step.condition !== undefined && !this.conditionHolds(session, step)) {
      return { kind: 'skipped', log: skippedLog(step) };
    }
    const hasEffect = !registered.options.pure && !session.dryRun;
    if (hasEffect && !callerCheckHolds(session)) {
      // The write that marked this step in flight ahead may have read the caller already.
      const refused = await this.executor.callerRefused(session, journal.callerReadFor(index));
      if (refused) return { kind: 'fatal', failure: refused, log: failedLog(step, refused, [], 0) };
    }
    if (hasEffect) {
      const ahead = registered.options.carriesRunWrite
        ? stepInFlightAhead(session.definition, index, this.registry)
        : null;
      // That step checks its caller before it starts: the write that marks it reads the account too.
      const callerRead = ahead !== null ? this.executor.callerRead(session) : null;
      if (await journal.cancelledBeforeEffect(index, registered.options, ahead, callerRead))
        return { kind: 'cancelled' };
    }
    const result = await this.executor.execute(session, step, index, registered, pending);
    journal.stepRan();
    if (!registered.options.pure) session.callerCheckedAt = null;
    return result;
  }

  /**
   * The step paused the run: it is stored `waiting` (no process holds it) with the step's own effects
   * (its notification) in the outbox, sent now; the effects of earlier steps stay held until the run
   * ends. A step paused again keeps the deadline and start of its first pause.
   */
  private async pause(
    session: RunSession,
    index: number,
    paused: Extract<StepResult, { kind: 'waiting' }>,
    secrets: ReadonlySet<string>,
  ): Promise<RunResult> {
    const { checkpoint } = session.state;
    const step = session.definition.steps[index];
    const earlier = checkpoint.waiting?.index === index ? checkpoint.waiting : null;
    checkpoint.waiting = {
      ...paused.wait,
      index,
      step: step.name,
      until: earlier?.until ?? paused.wait.until,
      since: earlier?.since ?? this.clock.now(),
    };
    checkpoint.signal = null;
    const effects = paused.effects.map((effect) => ({
      stepIndex: effect.index,
      effectIndex: effect.seq,
      stepName: effect.step,
      kind: effect.kind,
      payload: effect.payload,
    }));
    await session.journal.pause(index, checkpoint.waiting.until, effects);
    const runId = session.journal.runId;
    if (runId !== null && effects.length > 0) await this.dispatcher.deliverForRun(runId);
    return waitingResult(session, step.name, secrets);
  }

  /** The step the run waited at has run: its wait is over (and no longer counts against the deadline). */
  private endWait(session: RunSession, index: number): void {
    const { checkpoint } = session.state;
    if (checkpoint.waiting?.index !== index) return;
    checkpoint.pausedMs =
      (checkpoint.pausedMs ?? 0) + Math.max(0, this.clock.now() - checkpoint.waiting.since);
    checkpoint.waiting = null;
    checkpoint.signal = null;
  }

  /** Ends the run `failed` at `step`: held effects are dropped (nothing more happens for the run). */
  private endFatally(
    session: RunSession,
    step: StepDefinition,
    failure: StepFailure,
    log: StepLog,
    secrets: ReadonlySet<string>,
  ): Promise<RunResult> {
    session.state.logs.push(log);
    session.state.dropEffects();
    return this.end(session, 'failed', { name: step.name, failure }, secrets);
  }

  /**
   * The run's final write (its effects go into the outbox in it), then its effects are sent, the
   * failure logged and, when the workflow asks for it, the administrator told.
   */
  private async end(
    session: RunSession,
    status: FinalStatus,
    failedStep: FailedStep,
    secrets: ReadonlySet<string>,
  ): Promise<RunResult> {
    const ending = runEnding(session, status, failedStep, secrets, this.clock.now());
    await session.journal.finish(ending.finish, ending.logEntry, ending.effects);
    const runId = session.journal.runId;
    if (runId === null) return ending.result;
    this.metrics.runFinished(session.workflow.id, status);
    if (ending.effects.length > 0) await this.dispatcher.deliverForRun(runId);
    if (status === 'failed' || status === 'rolled_back') {
      this.logger.warn({
        msg: `workflow ${session.workflow.id} run ${runId} ended ${status} at step ${failedStep?.name ?? '-'} (${failedStep?.failure.code ?? '-'})`,
        workflowId: session.workflow.id,
        runId,
        status,
        step: failedStep?.name ?? null,
        code: failedStep?.failure.code ?? null,
        requestId: session.request.requestId,
      });
      if (session.definition.errorHandling?.notify)
        await this.adminNotifier.notifyFailure({
          workflowName: session.workflow.name,
          workflowId: session.workflow.id,
          runId,
          stepName: failedStep?.name ?? null,
          error: redact({ code: failedStep?.failure.code, message: failedStep?.failure.message }, secrets),
        });
    }
    return ending.result;
  }

  /** A condition that cannot be evaluated (a rule over a limit) counts as not met. */
  private conditionHolds(session: RunSession, step: StepDefinition): boolean {
    try {
      return conditionMet(step.condition!, session.state.templateScope());
    } catch (error) {
      this.logger.warn(`workflow condition could not be evaluated: ${(error as Error).message}`);
      return false;
    }
  }
}
