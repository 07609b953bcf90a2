import { Inject, Injectable, Logger } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { requireUser, type RequestContext } from '../../common/context/request-context';
import type { AppError } from '../../common/errors/app-error';
import { Translator } from '../../common/i18n/translator.service';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { RecordsService } from '../../data/records.service';
import { AdminNotifier } from '../../mail/admin-notifier.service';
import { MailService } from '../../mail/mail.service';
import { FormAccessService } from '../../permissions/form-access.service';
import type { OnErrorStrategy, WorkflowConfigDto, WorkflowStepDto } from '../dto/workflow-definition.dto';
import type { RunStatus, WorkflowResultDto } from '../dto/workflow-response.dto';
import type { StepContext, StepOutcome } from '../steps/step-handler';
import { WorkflowRunsRepository } from '../workflow-runs.repository';
import { WorkflowsService } from '../workflows.service';
import { conditionMet } from './condition';
import { parseContextPath, readSegments } from './context-path';
import { redact } from './redaction';
import { delayBeforeAttempt, retryPolicyOf } from './retry-policy';
import { RunState, type AttemptLog, type StepLog } from './run-state';
import { StepRegistry, type RegisteredStep } from './step-registry.service';
import { toStepFailure, type StepFailure } from './step-failure';
import { asText, renderDeep, renderTemplate, type TemplateEnv } from './template';
import { WorkflowClock } from './workflow-clock';

interface CompletedStep {
  index: number;
  step: WorkflowStepDto;
  registered: RegisteredStep;
  config: object;
  result: unknown;
  provided: StepOutcome['provides'];
  context: StepContext;
}

interface RunIdentity {
  runId: string;
  workflowId: string;
  workflowName: string;
  configId: string;
}

/**
 * Runs a workflow inside the request (SPEC): steps in order, each behind its condition, with the
 * retry policy, `onError` (stop, continue, rollback with reverse-order compensation), held mail,
 * redaction of env values, the `workflow_runs` record and the saved record's `workflow` log.
 * Handlers call the same services as the routes with the caller's context, so a step can never do
 * what the caller could not do through the API.
 */
@Injectable()
export class WorkflowRunner {
  private readonly logger = new Logger(WorkflowRunner.name);
  private readonly envAllowlist: ReadonlySet<string>;

  constructor(
    private readonly workflows: WorkflowsService,
    private readonly formAccess: FormAccessService,
    private readonly registry: StepRegistry,
    private readonly runs: WorkflowRunsRepository,
    private readonly records: RecordsService,
    private readonly mail: MailService,
    private readonly adminNotifier: AdminNotifier,
    private readonly clock: WorkflowClock,
    private readonly translator: Translator,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.envAllowlist = new Set(config.workflowEnvAllowlist);
  }

  /** 404/403/422 when the run cannot start; otherwise the result object, whether the run succeeded or not. */
  async execute(
    ctx: RequestContext,
    workflowId: string,
    body: { configId: string; data: Record<string, unknown> },
  ): Promise<WorkflowResultDto> {
    const user = requireUser(ctx);
    const workflow = await this.workflows.requireRunnable(ctx, workflowId);
    const { config: form } = await this.formAccess.require(ctx, body.configId, 'executeWorkflows');
    const definition = workflow.config as unknown as WorkflowConfigDto;
    const run = await this.runs.start({
      workflowId: workflow.id,
      userId: user.userId,
      siteId: form.siteId ?? ctx.siteId,
      configId: form.id,
    });
    const started = this.clock.now();
    const state = new RunState({
      input: body.data,
      results: {},
      user: { id: user.userId, email: user.email, role: user.role },
      formTitle: form.title,
      workflowName: workflow.name,
    });
    const identity: RunIdentity = {
      runId: run.id,
      workflowId: workflow.id,
      workflowName: workflow.name,
      configId: form.id,
    };
    const env: TemplateEnv = { allowlist: this.envAllowlist, values: process.env, resolved: state.secrets };

    let status: Exclude<RunStatus, 'running'> = 'success';
    let failedStep: { name: string; failure: StepFailure } | null = null;
    const completed: CompletedStep[] = [];

    for (const [index, step] of definition.steps.entries()) {
      const registered = this.registry.get(step.type);
      if (step.condition !== undefined && !this.safeConditionMet(step.condition, state)) {
        state.logs.push({
          name: step.name,
          type: step.type,
          status: 'skipped',
          result: null,
          attempts: 0,
          durationMs: 0,
        });
        continue;
      }
      const context = this.stepContext(ctx, identity, step, index, state, env);
      const outcome = registered
        ? await this.runStep(context, step, index, registered, definition, state, env)
        : { failure: unknownType(step.type), log: failedLog(step, unknownType(step.type), [], 0) };
      state.logs.push(outcome.log);
      if ('result' in outcome) {
        state.scope.results[step.name] = outcome.result.result;
        Object.assign(state.scope, outcome.result.provides ?? {});
        completed.push({
          index,
          step,
          registered: registered!,
          config: outcome.config,
          result: outcome.result.result,
          provided: outcome.result.provides,
          context,
        });
        continue;
      }
      if (outcome.failure.provides) Object.assign(state.scope, pickScopeEntries(outcome.failure.provides));
      failedStep = { name: step.name, failure: outcome.failure };
      const strategy: OnErrorStrategy = step.onError ?? definition.errorHandling?.strategy ?? 'stop';
      if (strategy === 'continue') continue;
      if (strategy === 'rollback') {
        await this.compensate(completed, state);
        status = 'rolled_back';
      } else {
        status = 'failed';
      }
      break;
    }

    if (status !== 'rolled_back') {
      const undelivered = await this.sendHeldMail(state);
      if (undelivered && status === 'success') {
        status = 'failed';
        failedStep = undelivered;
      }
    }
    return this.finish(identity, definition, state, status, failedStep, started);
  }

  private async runStep(
    context: StepContext,
    step: WorkflowStepDto,
    index: number,
    registered: RegisteredStep,
    definition: WorkflowConfigDto,
    state: RunState,
    env: TemplateEnv,
  ): Promise<{ result: StepOutcome; config: object; log: StepLog } | { failure: StepFailure; log: StepLog }> {
    const policy = retryPolicyOf(definition.retry, step.retry);
    const attempts: AttemptLog[] = [];
    const stepStarted = this.clock.now();
    const rendered = renderDeep(
      step.config ?? {},
      state.templateScope(),
      env,
      new Set(registered.options.rawFields ?? []),
    );
    const problems = this.registry.configProblems(step.type, rendered, 'config');
    if (problems.length > 0) {
      const failure: StepFailure = {
        code: 'INVALID_STEP_CONFIG',
        message: 'the rendered step config is not valid',
        retryable: false,
        details: { validationErrors: problems },
      };
      return { failure, log: failedLog(step, failure, attempts, this.clock.now() - stepStarted) };
    }
    const config = plainToInstance(registered.options.config, rendered);
    let retryAfterMs: number | undefined;
    for (let attempt = 1; attempt <= policy.maxAttempts; attempt++) {
      const delayMs = delayBeforeAttempt(policy, attempt, retryAfterMs);
      await this.clock.sleep(delayMs);
      const attemptStarted = this.clock.now();
      try {
        const result = await registered.handler.execute({ ...context, attempt }, config);
        attempts.push({ attempt, status: 'success', delayMs, durationMs: this.clock.now() - attemptStarted });
        return {
          result,
          config,
          log: {
            name: step.name,
            type: step.type,
            status: 'success',
            result: result.result ?? null,
            attempts: attempt,
            durationMs: this.clock.now() - stepStarted,
            attemptLog: attempts,
          },
        };
      } catch (error) {
        const failure = toStepFailure(error, (appError) => this.translateError(appError, context.ctx));
        attempts.push({
          attempt,
          status: 'failed',
          delayMs,
          durationMs: this.clock.now() - attemptStarted,
          error: `${failure.code}: ${failure.message}`,
        });
        if (!failure.retryable || attempt === policy.maxAttempts)
          return { failure, log: failedLog(step, failure, attempts, this.clock.now() - stepStarted) };
        retryAfterMs = failure.retryAfterMs;
      }
    }
    throw new Error('unreachable: the attempt loop always returns');
  }

  /** Reverse order; a failing compensation is logged and the others still run. */
  private async compensate(completed: CompletedStep[], state: RunState): Promise<void> {
    for (const done of [...completed].reverse()) {
      const log = state.logs.find((entry) => entry.name === done.step.name)!;
      const dropped = state.heldMail.get(done.index)?.length ?? 0;
      state.heldMail.delete(done.index);
      if (done.registered.handler.compensate) {
        try {
          const outcome = await done.registered.handler.compensate(done.context, done.config, done.result);
          log.status = outcome.status;
          log.compensation = outcome.detail ?? null;
          // What an undone step produced (the saved record) is no longer the run's outcome.
          if (outcome.status === 'compensated')
            for (const key of Object.keys(done.provided ?? {}))
              delete (state.scope as unknown as Record<string, unknown>)[key];
        } catch (error) {
          const failure = toStepFailure(error, (appError) => this.translateError(appError, done.context.ctx));
          log.status = 'not_compensable';
          log.compensation = { error: { code: failure.code, message: failure.message } };
        }
      } else if (dropped > 0) {
        log.status = 'compensated';
        log.compensation = { mailDropped: dropped };
      } else if (!done.registered.options.replayable) {
        log.status = 'not_compensable';
      }
    }
    state.heldMail.clear();
  }

  /** Sends the run's held mail; the first step whose mail could not be delivered fails the run. */
  private async sendHeldMail(state: RunState): Promise<{ name: string; failure: StepFailure } | null> {
    let firstFailure: { name: string; failure: StepFailure } | null = null;
    for (const [index, mails] of state.heldMail) {
      // Every step adds exactly one log entry, so the log of step `index` is at `index`.
      const log = state.logs[index];
      for (const mail of mails) {
        try {
          await this.mail.send(mail);
        } catch (error) {
          const failure = toStepFailure(error, () => 'mail delivery failed');
          log.status = 'failed';
          log.error = { code: 'MAIL_DELIVERY_FAILED', message: failure.message };
          firstFailure ??= { name: log.name, failure: { ...failure, code: 'MAIL_DELIVERY_FAILED' } };
        }
      }
    }
    state.heldMail.clear();
    return firstFailure;
  }

  private async finish(
    identity: RunIdentity,
    definition: WorkflowConfigDto,
    state: RunState,
    status: Exclude<RunStatus, 'running'>,
    failedStep: { name: string; failure: StepFailure } | null,
    started: number,
  ): Promise<WorkflowResultDto> {
    const savedData = state.scope.savedData ?? null;
    const dataId = typeof savedData?._id === 'string' ? savedData._id : null;
    const message =
      status === 'success'
        ? failedStep
          ? `Workflow completed; step "${failedStep.name}" failed and was continued past`
          : 'Workflow completed'
        : `${status === 'rolled_back' ? 'Workflow rolled back' : 'Workflow failed'}: step "${failedStep?.name}" failed: ${failedStep?.failure.message}`;
    const result = redact(
      {
        success: status === 'success',
        message,
        workflowId: identity.workflowId,
        workflowName: identity.workflowName,
        runId: identity.runId,
        status,
        steps: state.logs,
        data: savedData,
        results: state.scope.results,
      },
      state.secrets,
    );
    await this.runs.finish(identity.runId, {
      status,
      message: result.message,
      steps: result.steps,
      dataId,
      durationMs: Math.max(0, Math.round(this.clock.now() - started)),
    });
    if (dataId) {
      await this.records.appendWorkflowLog(dataId, {
        runId: identity.runId,
        workflowId: identity.workflowId,
        workflowName: identity.workflowName,
        status,
        at: new Date().toISOString(),
        steps: result.steps.map(({ name, type, status: stepStatus }) => ({ name, type, status: stepStatus })),
      });
    }
    if (status !== 'success' && definition.errorHandling?.notify) {
      await this.adminNotifier.notifyFailure({
        workflowName: identity.workflowName,
        workflowId: identity.workflowId,
        runId: identity.runId,
        stepName: failedStep?.name ?? null,
        error: redact(
          { code: failedStep?.failure.code, message: failedStep?.failure.message },
          state.secrets,
        ),
      });
    }
    return result;
  }

  private stepContext(
    ctx: RequestContext,
    identity: RunIdentity,
    step: WorkflowStepDto,
    index: number,
    state: RunState,
    env: TemplateEnv,
  ): StepContext {
    return {
      ctx,
      runId: identity.runId,
      workflowId: identity.workflowId,
      workflowName: identity.workflowName,
      configId: identity.configId,
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

/** Only the entries a step may produce; a failure never replaces `input`, `results` or `user`. */
function pickScopeEntries(provides: Record<string, unknown>): Record<string, unknown> {
  const allowed = ['savedData', 'validationResult', 'computedResults'];
  return Object.fromEntries(Object.entries(provides).filter(([key]) => allowed.includes(key)));
}

function unknownType(type: string): StepFailure {
  return {
    code: 'UNKNOWN_STEP_TYPE',
    message: `the step type "${type}" is not registered`,
    retryable: false,
  };
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
