import { PROTECTED_SCOPE_ENTRIES, type WorkflowScope } from '../../sdk/step-handler';
import type { HeldEffect, RunCheckpoint, RunRequest, StepLog } from './run-model';

export type { AttemptLog, PendingRetry, RunCheckpoint, StepLog } from './run-model';

/** Scope entries derived from the request and the workflow at every drive, so not checkpointed. */
const DERIVED = new Set(['user', 'formTitle', 'workflowName']);

/** What one run accumulates: the scope templates read, the step log, held effects, completed steps. */
export class RunState {
  readonly scope: WorkflowScope;

  constructor(
    request: Pick<RunRequest, 'actor' | 'formTitle'>,
    workflowName: string,
    readonly logs: StepLog[],
    readonly checkpoint: RunCheckpoint,
  ) {
    const { actor } = request;
    this.scope = {
      ...checkpoint.scope,
      user: { id: actor.userId, email: actor.email, role: actor.role },
      formTitle: request.formTitle,
      workflowName,
    };
  }

  /** A new run's state: nothing done yet. */
  static fresh(
    request: Pick<RunRequest, 'actor' | 'formTitle' | 'data' | 'savedData'>,
    workflowName: string,
    startedAt: number,
  ): RunState {
    // A triggered run starts with the event's record as `savedData` (not the run's own record: dataId stays null).
    const saved = request.savedData ? { savedData: request.savedData } : {};
    return new RunState(request, workflowName, [], {
      version: 2,
      scope: { input: request.data, results: {}, ...saved },
      completed: [],
      effects: [],
      lastFailure: null,
      pendingRetry: null,
      dataId: null,
      startedAt,
    });
  }

  /**
   * Takes what a step produced into the scope, leaving the protected entries alone; returns the
   * names it took. A saved record's id is remembered as the run's record (kept after a rollback).
   */
  provide(entries: Record<string, unknown> | undefined): string[] {
    const taken = Object.keys(entries ?? {}).filter((key) => !PROTECTED_SCOPE_ENTRIES.has(key));
    for (const key of taken) this.scope[key] = entries![key];
    const saved = this.scope.savedData;
    if (taken.includes('savedData') && typeof saved?._id === 'string') this.checkpoint.dataId = saved._id;
    return taken;
  }

  /** Drops what an undone step provided (its saved record is no longer the run's outcome). */
  withdraw(names: string[]): void {
    for (const key of names) if (!PROTECTED_SCOPE_ENTRIES.has(key)) delete this.scope[key];
  }

  hold(effects: HeldEffect[]): void {
    this.checkpoint.effects.push(...effects);
  }

  /** Drops held effects (of one step, or all): they will never be sent. Returns how many. */
  dropEffects(stepIndex?: number): number {
    const before = this.checkpoint.effects.length;
    this.checkpoint.effects = this.checkpoint.effects.filter(
      (effect) => stepIndex !== undefined && effect.index !== stepIndex,
    );
    return before - this.checkpoint.effects.length;
  }

  /** The scope as templates and conditions see it (roots only; env is resolved separately). */
  templateScope(extra: Record<string, unknown> = {}): Record<string, unknown> {
    return { ...this.scope, ...extra };
  }

  /** The checkpoint with the scope as it is now. */
  snapshot(): RunCheckpoint {
    const scope = Object.fromEntries(Object.entries(this.scope).filter(([key]) => !DERIVED.has(key)));
    return {
      ...this.checkpoint,
      scope: { ...scope, input: this.scope.input, results: this.scope.results },
    };
  }
}
