import type { RequestContext } from '../../../common/context/request-context';
import type { CompiledStep } from '../compiled-definitions';
import type { RunJournal } from '../journal/run-journal';
import type { StepWait } from '../../sdk/step-handler';
import type { HeldEffect, RunRequest, StepLog, WorkflowDefinition } from '../model/run-model';
import type { RunState } from '../model/run-state';
import type { StepFailure, Translate } from './step-failure';
import type { TemplateEnv } from '../model/template';

/** One drive of a run: what the driver and its parts share while it lasts. */
export interface RunSession {
  journal: RunJournal;
  workflow: { id: string; name: string };
  definition: WorkflowDefinition;
  /** Per step of the definition, what is the same at every run (see CompiledDefinitions). */
  compiled: CompiledStep[];
  request: RunRequest;
  /** The caller's context, replaced by a fresh one at each re-check of the caller (RunCaller). */
  ctx: RequestContext;
  /**
   * When the caller was last checked (`performance.now()`: the request's own check, or a re-check)
   * with no step with an effect run since; null when the next step with an effect checks first.
   */
  callerCheckedAt: number | null;
  /** When the run's `config.timeoutMs` is up (clock time); attempts and retry waits end there. */
  deadline: number;
  /** Where the stored run left off; a step in flight then may have had its effect. */
  resumedAt: { nextStep: number; stepInFlight: number | null };
  state: RunState;
  env: TemplateEnv;
  /** A dry run: steps with effects are only rendered, nothing is stored. */
  dryRun: boolean;
  /** An engine failure's message in the run's language. */
  translate: Translate;
}

export const DEFAULT_RUN_TIMEOUT_MS = 5 * 60_000;

/**
 * How long a check of the caller holds while only pure steps run after it (a validate before the
 * first save needs no second read of the account). A pure step computes and waits for nothing, so a
 * demotion that lands during it is the race that exists between any check and the effect it guards;
 * past this bound (a slow step, a retry wait) the next step with an effect checks again.
 */
export const CALLER_CHECK_HOLDS_MS = 100;

/** Whether the caller's last check still stands for the step with an effect about to start. */
export function callerCheckHolds(session: RunSession): boolean {
  return (
    session.callerCheckedAt !== null && performance.now() - session.callerCheckedAt <= CALLER_CHECK_HOLDS_MS
  );
}

/** What became of one step. */
export type StepResult =
  | {
      kind: 'success';
      result: unknown;
      provides?: Record<string, unknown>;
      log: StepLog;
      effects: HeldEffect[];
    }
  | { kind: 'failure'; failure: StepFailure; log: StepLog }
  | { kind: 'skipped'; log: StepLog }
  | { kind: 'requeued' }
  /** The step paused the run (StepWait); its effects go to the outbox when the pause is written. */
  | { kind: 'waiting'; wait: StepWait; effects: HeldEffect[] }
  | { kind: 'cancelled' }
  /** Ends the run `failed` whatever `onError` says: its time is up, or its caller lost the right. */
  | { kind: 'fatal'; failure: StepFailure; log: StepLog };
