import type { StepStatus } from '../dto/workflow-response.dto';
import type { OutgoingMail, WorkflowScope } from '../steps/step-handler';
import type { StepFailure } from './step-failure';

export interface AttemptLog {
  attempt: number;
  status: 'success' | 'failed';
  delayMs: number;
  durationMs: number;
  error?: string;
}

export interface StepLog {
  name: string;
  type: string;
  status: StepStatus;
  result: unknown;
  error?: Omit<StepFailure, 'retryable' | 'retryAfterMs' | 'provides'>;
  attempts: number;
  durationMs: number;
  attemptLog?: AttemptLog[];
  compensation?: unknown;
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

/** What a run carries from step to step; written as the checkpoint after every step. */
export interface RunCheckpoint {
  scope: Pick<WorkflowScope, 'input' | 'results' | 'savedData' | 'validationResult' | 'computedResults'>;
  completed: { index: number; result: unknown; provided: string[] }[];
  heldMail: { index: number; mail: OutgoingMail }[];
  lastFailure: { name: string; failure: StepFailure } | null;
  pendingRetry: PendingRetry | null;
  startedAt: number;
}

/** What one run accumulates: the scope templates read, the step log, held mail, completed steps. */
export class RunState {
  constructor(
    readonly scope: WorkflowScope,
    readonly logs: StepLog[],
    readonly checkpoint: RunCheckpoint,
  ) {}

  hold(stepIndex: number, mail: OutgoingMail): void {
    this.checkpoint.heldMail.push({ index: stepIndex, mail });
  }

  /** The scope as templates and conditions see it (roots only; env is resolved separately). */
  templateScope(extra: Record<string, unknown> = {}): Record<string, unknown> {
    return { ...this.scope, ...extra };
  }

  /** The checkpoint with the scope as it is now. */
  snapshot(): RunCheckpoint {
    const { input, results, savedData, validationResult, computedResults } = this.scope;
    return { ...this.checkpoint, scope: { input, results, savedData, validationResult, computedResults } };
  }
}
