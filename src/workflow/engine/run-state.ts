import type { OutgoingMail, WorkflowScope } from '../steps/step-handler';
import type { StepFailure } from './step-failure';
import type { StepStatus } from '../dto/workflow-response.dto';

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
  error?: Omit<StepFailure, 'retryable' | 'retryAfterMs'>;
  attempts: number;
  durationMs: number;
  attemptLog?: AttemptLog[];
  compensation?: unknown;
}

/** What one run accumulates: the scope templates read, the step log, held mail and secrets seen. */
export class RunState {
  readonly logs: StepLog[] = [];
  /** Mail held per step index, sent when the run ends and dropped on rollback. */
  readonly heldMail = new Map<number, OutgoingMail[]>();
  /** Env values rendered during the run; redacted from everything stored or answered. */
  readonly secrets = new Set<string>();

  constructor(readonly scope: WorkflowScope) {}

  hold(stepIndex: number, mail: OutgoingMail): void {
    const list = this.heldMail.get(stepIndex) ?? [];
    list.push(mail);
    this.heldMail.set(stepIndex, list);
  }

  /** The scope as templates and conditions see it (roots only; env is resolved separately). */
  templateScope(extra: Record<string, unknown> = {}): Record<string, unknown> {
    return { ...this.scope, ...extra };
  }
}
