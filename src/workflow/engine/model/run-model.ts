import type { AuthUser } from '../../../common/context/request-context';
import type { EventType } from '../../../events/domain-event';
import type { Locale } from '../../../common/i18n/locale';
import type { StepSignal, StepWait } from '../../sdk/step-handler';
import type { StepCondition } from './condition';
import type { RetrySettings } from '../driver/retry-policy';
import type { StepFailure } from '../driver/step-failure';

/**
 * The engine's own model of what it runs and stores. The HTTP DTOs describe what a client sends
 * and gets; these types describe what the engine reads back from the database (parsed in
 * stored-state.ts), so a change of the API's shape never silently changes a stored run.
 */

/** A step's status in a run's log (also the API's enum). */
export const STEP_STATUSES = [
  'success',
  'failed',
  'skipped',
  'compensated',
  'not_compensable',
  'interrupted',
] as const;
export type StepStatus = (typeof STEP_STATUSES)[number];
export const RUN_STATUSES = [
  'queued',
  'running',
  'waiting',
  'success',
  'failed',
  'rolled_back',
  'cancelled',
] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** What an execute request names: the form and the data. */
export interface ExecuteBody {
  configId: string;
  data: Record<string, unknown>;
}

export type OnErrorStrategy = 'stop' | 'continue' | 'rollback';

export interface StepDefinition {
  name: string;
  type: string;
  config?: Record<string, unknown>;
  condition?: StepCondition;
  onError?: OnErrorStrategy;
  retry?: RetrySettings;
  timeoutMs?: number;
}

export interface WorkflowDefinition {
  steps: StepDefinition[];
  retry?: RetrySettings;
  errorHandling?: { strategy?: OnErrorStrategy; notify?: boolean };
  /** Longest time a whole run may take, ms. */
  timeoutMs?: number;
}

/** What a run was started with; stored on the run record so any instance can drive it. */
export interface RunRequest {
  configId: string;
  data: Record<string, unknown>;
  formTitle: string | null;
  actor: AuthUser;
  siteId: string | null;
  locale: Locale;
  requestId: string;
  mode: 'sync' | 'async';
  /** A queued run: the W3C traceparent of the request that queued it (its drives link to that trace). */
  traceparent?: string;
  /** A run queued by an event (a workflow trigger): which event, and how deep in a chain of triggers. */
  trigger?: RunTrigger;
  /** The scope's `savedData` from the start (a triggered run: the record of the event). */
  savedData?: Record<string, unknown>;
}

/** The event that queued a run, and its place in a chain (1: caused by a route, n+1: by a run at n). */
export interface RunTrigger {
  eventId: string;
  event: EventType;
  depth: number;
  /** The chain's root event: the change made outside any triggered run (this event at depth 1). */
  rootEventId: string;
  /**
   * Every workflow the chain passed through, this run's included, oldest first: none of them is
   * triggered again by what this run changes.
   */
  chain: string[];
}

export interface AttemptLog {
  attempt: number;
  status: 'success' | 'failed';
  delayMs: number;
  durationMs: number;
  error?: string;
}

/** One step's entry in the run's step log (what the API answers and the run record keeps). */
export interface StepLog {
  name: string;
  type: string;
  status: StepStatus;
  result: unknown;
  error?: { code: string; message: string; details?: unknown };
  attempts: number;
  durationMs: number;
  attemptLog?: AttemptLog[];
  compensation?: unknown;
  /** Taken from the run a re-run repeats, not run again. */
  reused?: boolean;
}

/** A retry that waits in the queue (asynchronous runs): which step, which attempt comes next. */
export interface PendingRetry {
  index: number;
  attempt: number;
  /** The wait before that attempt, as the attempt log reports it. */
  delayMs: number;
  attemptLog: AttemptLog[];
  stepStartedAt: number;
}

/**
 * An effect a step asked for (see StepEffects), held by the run until its final write commits it
 * to the outbox; `index` is the step's, `seq` the effect's within that step.
 */
export interface HeldEffect {
  index: number;
  seq: number;
  step: string;
  kind: string;
  payload: Record<string, unknown>;
}

export const CHECKPOINT_VERSION = 2;

/** A step that succeeded: its result and what it provided, for a rollback and for a re-run. */
export interface CompletedStep {
  index: number;
  /** The step's name (absent in checkpoints written before re-runs). */
  name?: string;
  result: unknown;
  /** The scope entries it provided... */
  provided: string[];
  /** ... and their values as it provided them (a re-run provides them again). */
  values?: Record<string, unknown>;
}

/** What a run carries from step to step; stored as the run's checkpoint. */
export interface RunCheckpoint {
  version: typeof CHECKPOINT_VERSION;
  /** The scope without what is derived from the request (user, formTitle, workflowName). */
  scope: Record<string, unknown> & { input: Record<string, unknown>; results: Record<string, unknown> };
  completed: CompletedStep[];
  effects: HeldEffect[];
  lastFailure: { name: string; failure: StepFailure } | null;
  pendingRetry: PendingRetry | null;
  /** The record the run created (kept when a rollback deactivates it). */
  dataId: string | null;
  startedAt: number;
  /** Where the run waits (status `waiting`): the step, who may decide, until when, since when. */
  waiting?: WaitingAt | null;
  /** The decision (or the deadline) that resumes the waiting step, until that step has run. */
  signal?: (StepSignal & { index: number }) | null;
  /** Time spent waiting so far (not counted against the run's `timeoutMs`). */
  pausedMs?: number;
}

export interface WaitingAt extends StepWait {
  index: number;
  step: string;
  since: number;
}
