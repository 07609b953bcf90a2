import type { RequestContext } from '../../common/context/request-context';
import type { FormPermissionName } from '../../permissions/form-permission-names';
import type { RunWriteHandle } from './run-write-handle';

/** What templates and conditions read: `{{input.x}}`, `savedData._id`, `results.lookup.status`, ... */
export interface WorkflowScope {
  /** The `data` of the execute body. */
  input: Record<string, unknown>;
  /** The record saved by a `save` step, as the API returns it (`_id`, `data`, ...). */
  savedData?: Record<string, unknown>;
  /** The outcome of the last `validate` step: `{valid, validationErrors}`. */
  validationResult?: Record<string, unknown>;
  computedResults?: Record<string, unknown>;
  /** Each finished step's result under its name. */
  results: Record<string, unknown>;
  user: { id: string; email: string; role: string } | null;
  formTitle: string | null;
  workflowName: string;
  /** What other steps provide under their own names (see `StepOutcome.provides`). */
  [entry: string]: unknown;
}

/** Scope entries no step may provide: the run's input, the results, the caller, the run's names, env. */
export const PROTECTED_SCOPE_ENTRIES: ReadonlySet<string> = new Set([
  'input',
  'results',
  'user',
  'env',
  'formTitle',
  'workflowName',
]);

/** An effect a step asks for: `kind` names a registered effect sender (`mail` is built in). */
export interface EffectRequest {
  kind: string;
  payload: Record<string, unknown>;
}

/**
 * The outbox as a step sees it. An enqueued effect is held by the run and stored in the outbox by
 * the run's final write: it is sent after that commit (retried with backoff, never twice under one
 * key), and dropped when the run rolls back, is cancelled or ends fatally; effects of a failed
 * attempt are dropped too (the next attempt asks again).
 */
export interface StepEffects {
  /** Throws a StepError (UNKNOWN_EFFECT_KIND, INVALID_STEP_CONFIG) for a kind or payload that cannot be sent. */
  enqueue(effect: EffectRequest): void;
}

export interface RenderOptions {
  /** Escape every inserted value for HTML (the notify step's own templates). */
  escape?: 'html';
  /** More roots for this rendering only (a compensating request reads `result`). */
  extra?: Record<string, unknown>;
}

/** Everything a step handler may use while it runs. */
export interface StepContext {
  /** The caller of the run: pass it to services so their access checks hold exactly as for the routes. */
  readonly ctx: RequestContext;
  readonly runId: string;
  readonly workflowId: string;
  readonly workflowName: string;
  /** The `configId` of the execute body; a step's own `config.configId` overrides it. */
  readonly configId: string | null;
  readonly step: { readonly name: string; readonly type: string; readonly index: number };
  /** 1 for the first attempt. */
  readonly attempt: number;
  readonly scope: Readonly<WorkflowScope>;
  /** Aborted when the step's time is up; pass it to anything that waits. */
  readonly signal: AbortSignal;
  /** Reads a context path (`input`, `results.map`, `savedData.data.city`); undefined when missing. */
  read(path: string): unknown;
  /** Renders a template with the run's resolver (never evaluates code). */
  render(template: string, options?: RenderOptions): string;
  /** Effects for after the run commits (mail: `{kind: 'mail', payload: {to, subject, html?, text?}}`). */
  readonly effects: StepEffects;
  /**
   * Why a step that paused its run (`StepOutcome.wait`) runs again: the decision someone made, or
   * its deadline; null at its first run.
   */
  readonly resumedWith: StepSignal | null;
  /**
   * The run's first write, when the run is not stored yet and the step type declares
   * `carriesRunWrite`: an opaque handle that only the built-in `save` step opens, to hand the write
   * to its insert (RecordsService.create's `carrying`), so the run is stored with the step's effect.
   * Null otherwise.
   */
  readonly carriedWrite: RunWriteHandle | null;
}

/** What resumes a paused run at its step. */
export type StepSignal =
  | {
      kind: 'decision';
      approve: boolean;
      comment: string | null;
      decidedBy: { userId: string; email: string };
      decidedAt: string;
      /** Whose run it is (the user who started it); absent in decisions stored before it was kept. */
      startedBy?: { userId: string; email: string };
    }
  | { kind: 'timeout'; at: string };

/**
 * A pause of the run at this step: the run is stored `waiting` (no process holds it) until a user
 * named in `deciders` (or an admin) decides, or `until` (epoch ms) passes; then the step runs again
 * with `context.resumedWith` set. Effects the step asked for are sent when the run pauses. The
 * run's own starter decides only when named in `users` or when `allowSelfApproval` is true
 * (separation of duties: a role they hold is not enough, nor is being an admin).
 */
export interface StepWait {
  deciders: { roles: string[]; users: string[]; allowSelfApproval?: boolean };
  until: number | null;
}

/** What a successful step gives back to the runner. */
export interface StepOutcome<R = unknown> {
  /** Stored under the step's name in `results` and in the step log. */
  result: R;
  /**
   * Context entries the step produces for later steps and templates, under names of its own
   * (`savedData`, `validationResult`, `computedResults`, or anything else); the protected entries
   * (`input`, `results`, `user`, `env`, `formTitle`, `workflowName`) are never replaced.
   */
  provides?: Record<string, unknown>;
  /** Pauses the run here instead (see StepWait); `result` and `provides` are then ignored. */
  wait?: StepWait;
}

export interface CompensationOutcome {
  status: 'compensated' | 'not_compensable';
  detail?: unknown;
}

/** A form permission a step needs on a configuration to do its work (a `save`: `createResults`). */
export interface FormAccessNeed {
  configId: string;
  permission: FormPermissionName;
}

/**
 * A workflow step type. Implement it in a provider marked `@WorkflowStep({type, config, replayable})`
 * and add the provider to any module: the registry finds it at boot.
 *
 * The runner owns conditions, template rendering (every string of the config except the declared
 * `rawFields`), retries, `onError`, timing and the step log; a handler only does its work.
 * Throw a `StepError` (with `retryable` for transient failures) to fail the step.
 */
export interface WorkflowStepHandler<C extends object = object, R = unknown> {
  /**
   * Runs the step with its config already validated (against the config class) and rendered. The
   * config is read-only: one without templates is one frozen instance that every run shares.
   */
  execute(context: StepContext, config: C): Promise<StepOutcome<R>>;
  /**
   * The form permissions the step needs, with its rendered config; `run.configId` is the execute
   * body's. Before every attempt of a step with an effect the runner checks them for the caller as
   * they are then (current role and site), and a refusal ends the run like a caller who lost the
   * right to run it. Without it only the caller's right to run the workflow is checked.
   */
  requiredAccess?(config: C, run: { configId: string | null }): FormAccessNeed[];
  /** Undoes the step during a rollback; without it a completed step is reported `not_compensable`. */
  compensate?(context: StepContext, config: C, result: R): Promise<CompensationOutcome>;
}
