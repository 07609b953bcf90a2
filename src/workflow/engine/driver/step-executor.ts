import { Injectable, Logger } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import type { Parametrized } from '../../../database/built-statement';
import { AppError } from '../../../common/errors/app-error';
import { causeChain } from '../../../common/errors/cause-chain';
import { EffectRegistry } from '../../effects/effect-registry.service';
import type { StepSignal } from '../../sdk/step-handler';
import { delayBeforeAttempt, retryPolicyOf } from './retry-policy';
import type { AttemptLog, PendingRetry, StepDefinition } from '../model/run-model';
import { RunCaller } from '../run-caller';
import { DEFAULT_RUN_TIMEOUT_MS, type RunSession, type StepResult } from './run-session';
import { inSpan, markFailed, RUN_ATTRIBUTES } from './run-tracing';
import { attemptStep, type AttemptOutcome } from './step-attempt';
import { EffectBuffer, buildStepContext } from './step-context';
import { engineFailure, toStepFailure, type StepFailure } from './step-failure';
import { failedLog, succeededLog } from './step-logs';
import { StepRegistry, type RegisteredStep } from '../step-registry.service';
import { renderDeep } from '../model/template';
import { WorkflowClock } from '../workflow-clock';

const CANCEL_POLL_MS = 1000;

/**
 * Runs one step: renders its config (every string but the type's `rawFields`), checks it against
 * the type's config class, then its attempts under the retry policy, each bounded by the step's
 * `timeoutMs` and the run's deadline. A wait between attempts is slept in the request (watching for
 * cancellation) or, for a queued run, kept in the queue. Before a later attempt of a step with an
 * effect the caller is checked again, and before every attempt of one, what the step does (the form
 * permissions it declares, `requiredAccess`).
 */
@Injectable()
export class StepExecutor {
  private readonly logger = new Logger(StepExecutor.name);

  constructor(
    private readonly registry: StepRegistry,
    private readonly effects: EffectRegistry,
    private readonly clock: WorkflowClock,
    private readonly caller: RunCaller,
  ) {}

  async execute(
    session: RunSession,
    step: StepDefinition,
    index: number,
    registered: RegisteredStep,
    pending: PendingRetry | null,
  ): Promise<StepResult> {
    const { state, env } = session;
    const attemptLog: AttemptLog[] = pending?.attemptLog ?? [];
    const stepStarted = pending?.stepStartedAt ?? this.clock.now();
    const elapsed = () => this.clock.now() - stepStarted;
    const { rawFields, rendered: templated, fixedConfigProblems, fixedConfig } = session.compiled[index];
    const rendered = templated
      ? renderDeep(step.config ?? {}, state.templateScope(), env, rawFields)
      : (step.config ?? {});
    const problems = fixedConfigProblems ?? this.registry.configProblems(step.type, rendered, 'config');
    if (problems.length > 0) {
      const failure = engineFailure('INVALID_STEP_CONFIG', session.translate, {
        details: { validationErrors: problems },
      });
      return { kind: 'failure', failure, log: failedLog(step, failure, attemptLog, elapsed()) };
    }
    if (session.dryRun && !registered.options.pure) {
      const result = { dryRun: true, wouldRun: { type: step.type, config: rendered } };
      return { kind: 'success', result, log: succeededLog(step, result, [], 0), effects: [] };
    }
    const config = fixedConfig ?? plainToInstance(registered.options.config, rendered);
    const policy = session.dryRun
      ? { ...retryPolicyOf(undefined, undefined), maxAttempts: 1 }
      : retryPolicyOf(session.definition.retry, step.retry);
    let retryAfterMs: number | undefined;
    for (let attempt = pending?.attempt ?? 1; attempt <= policy.maxAttempts; attempt++) {
      const waitedInQueue = pending !== null && attempt === pending.attempt;
      const delayMs = waitedInQueue ? pending.delayMs : delayBeforeAttempt(policy, attempt, retryAfterMs);
      if (delayMs > 0 && !waitedInQueue) {
        if (this.clock.now() + delayMs >= session.deadline) {
          // The attempt after the wait would start past the run's deadline: the run ends now instead.
          const failure = this.runTimeout(session);
          return { kind: 'fatal', failure, log: failedLog(step, failure, attemptLog, elapsed()) };
        }
        if (session.request.mode === 'async') {
          // The wait is kept in the queue, not in memory: a crash meanwhile loses nothing.
          state.checkpoint.pendingRetry = { index, attempt, delayMs, attemptLog, stepStartedAt: stepStarted };
          attemptLog.at(-1)!.error += ` (next attempt in ${delayMs} ms)`;
          await session.journal.requeue(index, delayMs);
          return { kind: 'requeued' };
        }
        if (!(await this.waitUnlessCancelled(session, delayMs))) return { kind: 'cancelled' };
      }
      if (attempt > 1 && (await session.journal.readCancelRequested())) return { kind: 'cancelled' };
      if (attempt > 1 && !waitedInQueue && !registered.options.pure) {
        // Time passed since the caller was checked (a wait, an attempt): they may have lost the right.
        const refused = await this.callerRefused(session);
        if (refused)
          return { kind: 'fatal', failure: refused, log: failedLog(step, refused, attemptLog, elapsed()) };
      }
      if (!registered.options.pure) {
        // What this step does, for the caller as the last check found them (their current role and site).
        const refused = await this.stepAccessRefused(session, registered, config);
        if (refused)
          return { kind: 'fatal', failure: refused, log: failedLog(step, refused, attemptLog, elapsed()) };
      }
      state.checkpoint.pendingRetry = null;
      const attemptStarted = this.clock.now();
      const buffer = new EffectBuffer((kind) => this.effects.get(kind));
      const outcome = await this.tracedAttempt(session, step, attempt, () =>
        this.attempt(session, step, index, attempt, registered, config, buffer),
      );
      const durationMs = this.clock.now() - attemptStarted;
      if ('outcome' in outcome) {
        const { result, provides, wait } = outcome.outcome;
        if (wait) return { kind: 'waiting', wait, effects: buffer.held({ name: step.name, index }) };
        attemptLog.push({ attempt, status: 'success', delayMs, durationMs });
        return {
          kind: 'success',
          result,
          provides,
          log: succeededLog(step, result, attemptLog, elapsed()),
          effects: buffer.held({ name: step.name, index }),
        };
      }
      const failure = outcome.failure;
      attemptLog.push({
        attempt,
        status: 'failed',
        delayMs,
        durationMs,
        error: `${failure.code}: ${failure.message}`,
      });
      if (outcome.runTimedOut)
        return { kind: 'fatal', failure, log: failedLog(step, failure, attemptLog, elapsed()) };
      if (!failure.retryable || attempt === policy.maxAttempts)
        return { kind: 'failure', failure, log: failedLog(step, failure, attemptLog, elapsed()) };
      retryAfterMs = failure.retryAfterMs;
    }
    throw new Error('unreachable: the attempt loop always returns');
  }

  /** One call of the handler (see attemptStep), handed the run's first write when the journal offers it. */
  private attempt(
    session: RunSession,
    step: StepDefinition,
    index: number,
    attempt: number,
    registered: RegisteredStep,
    config: object,
    buffer: EffectBuffer,
  ): Promise<AttemptOutcome> {
    const { state, env } = session;
    return session.journal.attempt((carriedWrite) =>
      attemptStep({
        context: (signal) =>
          buildStepContext({
            ctx: session.ctx,
            runId: session.journal.runId ?? 'dry-run',
            workflow: session.workflow,
            configId: session.request.configId,
            step: { name: step.name, type: step.type, index },
            attempt,
            state,
            env,
            effects: buffer,
            signal,
            resumedWith: this.resumedWith(session, index),
            carriedWrite,
          }),
        registered,
        config,
        stepTimeoutMs: step.timeoutMs,
        runLeftMs: Math.max(0, session.deadline - this.clock.now()),
        runTimeout: () => this.runTimeout(session),
        translate: session.translate,
        onUnexpected: (error) =>
          this.logger.warn(
            `workflow ${session.workflow.id} run ${session.journal.runId} step ${step.name} threw: ${causeChain(error)}`,
          ),
      }),
    );
  }

  /** One attempt in its span (a child of the step's): the spans of what the handler does nest in it. */
  private tracedAttempt(
    session: RunSession,
    step: StepDefinition,
    attempt: number,
    work: () => Promise<AttemptOutcome>,
  ): Promise<AttemptOutcome> {
    const attributes = {
      [RUN_ATTRIBUTES.runId]: session.journal.runId ?? 'dry-run',
      [RUN_ATTRIBUTES.workflowId]: session.workflow.id,
      [RUN_ATTRIBUTES.step]: step.name,
      [RUN_ATTRIBUTES.stepType]: step.type,
      [RUN_ATTRIBUTES.attempt]: attempt,
      [RUN_ATTRIBUTES.requestId]: session.request.requestId,
    };
    return inSpan('workflow.attempt', attributes, async (span) => {
      const outcome = await work();
      if ('failure' in outcome) markFailed(span, outcome.failure.code);
      return outcome;
    });
  }

  /** The read of the caller's account that the run's write before the next step returns (see callerRefused). */
  callerRead(session: RunSession): Parametrized {
    return this.caller.accountRead(session.request);
  }

  /**
   * Re-reads the caller (RunCaller; `read`: the account as the run's last write read it, see
   * RunJournal.callerReadFor) and takes the fresh context; the failure that ends the run when
   * they may no longer run it. An unreachable database is not a refusal: it is thrown, and the run
   * resumes once its lease expires.
   */
  async callerRefused(session: RunSession, read?: unknown): Promise<StepFailure | null> {
    try {
      session.ctx = await this.caller.recheck(session.request, session.workflow.id, read);
      session.callerCheckedAt = performance.now();
      return null;
    } catch (error) {
      return this.refusalOf(error, session);
    }
  }

  /**
   * The form permissions the step declares it needs (`requiredAccess`, from its rendered config),
   * checked for the caller of the session's context; the failure that ends the run when one is
   * refused.
   */
  private async stepAccessRefused(
    session: RunSession,
    registered: RegisteredStep,
    config: object,
  ): Promise<StepFailure | null> {
    const needs = registered.handler.requiredAccess?.(config, { configId: session.request.configId }) ?? [];
    if (needs.length === 0) return null;
    try {
      await this.caller.requireStepAccess(session.ctx, needs);
      return null;
    } catch (error) {
      return this.refusalOf(error, session);
    }
  }

  /** A refusal (an AppError below 500) as a failure that is never retried; anything else is thrown. */
  private refusalOf(error: unknown, session: RunSession): StepFailure {
    if (!(error instanceof AppError) || error.status >= 500) throw error;
    return { ...toStepFailure(error, session.translate), retryable: false };
  }

  /**
   * What resumes the step the run waits at: the decision stored with the run, else its deadline
   * once passed (the queue took the run because it was due); null for any other step.
   */
  private resumedWith(session: RunSession, index: number): StepSignal | null {
    const { waiting, signal } = session.state.checkpoint;
    if (!waiting || waiting.index !== index) return null;
    if (signal && signal.index === index) {
      const { index: _index, ...rest } = signal;
      return rest;
    }
    const now = this.clock.now();
    return waiting.until !== null && now >= waiting.until
      ? { kind: 'timeout', at: new Date(now).toISOString() }
      : null;
  }

  /** The run's `config.timeoutMs` is up. */
  runTimeout(session: RunSession): StepFailure {
    const timeoutMs = session.definition.timeoutMs ?? DEFAULT_RUN_TIMEOUT_MS;
    return engineFailure('WORKFLOW_TIMEOUT', session.translate, { params: { timeoutMs } });
  }

  /** Sleeps out a retry delay in the request; false when the run was cancelled meanwhile. */
  private async waitUnlessCancelled(session: RunSession, delayMs: number): Promise<boolean> {
    const controller = new AbortController();
    const watch = setInterval(() => {
      session.journal
        .readCancelRequested()
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
}
