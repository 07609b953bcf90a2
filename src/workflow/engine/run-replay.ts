import { AppError } from '../../common/errors/app-error';
import type { CompletedStep, RunCheckpoint, StepLog, WorkflowDefinition } from './model/run-model';
import type { RunState } from './model/run-state';

/** What a re-run names: where it starts, and which definition it runs. */
export interface RerunBody {
  /** `start`, `failed` (the first step that failed), or a step's name. */
  from: string;
  definition: 'original' | 'current';
}

/** The steps before a re-run's point, as the earlier run left them: taken over, not run again. */
export interface ReplaySeed {
  /** The index (in the re-run's definition) of the first step the re-run runs. */
  nextStep: number;
  steps: { log: StepLog; completed: CompletedStep | null }[];
}

const REUSABLE: ReadonlySet<string> = new Set(['success', 'not_compensable', 'skipped', 'failed']);

/** The index of the re-run's first step in `definition`. */
export function rerunPoint(definition: WorkflowDefinition, from: string, earlierLogs: StepLog[]): number {
  if (from === 'start') return 0;
  let name = from;
  if (from === 'failed') {
    const failed = earlierLogs.find((log) => log.status === 'failed' || log.status === 'interrupted');
    if (!failed) throw new AppError('WORKFLOW_RERUN_NO_FAILED_STEP');
    name = failed.name;
  }
  const index = definition.steps.findIndex((step) => step.name === name);
  if (index < 0) throw new AppError('WORKFLOW_RERUN_STEP_UNKNOWN', { params: { step: name } });
  return index;
}

/**
 * The steps before `point`, matched by name with the earlier run's step log and completed steps (so
 * a changed definition is re-run as long as those steps ran). A step the earlier run did not run,
 * ran to an unknown end (interrupted), or undid in its rollback cannot be taken over: 422.
 */
export function replaySeed(
  definition: WorkflowDefinition,
  earlierDefinition: WorkflowDefinition | null,
  point: number,
  earlierLogs: StepLog[],
  earlierCheckpoint: RunCheckpoint | null,
): ReplaySeed {
  const completed = earlierCheckpoint?.completed ?? [];
  const steps = definition.steps.slice(0, point).map((step, index) => {
    const log = earlierLogs.find((entry) => entry.name === step.name);
    const notReusable = () =>
      new AppError('WORKFLOW_RERUN_STEP_NOT_REUSABLE', { params: { step: step.name } });
    if (!log || !REUSABLE.has(log.status)) throw notReusable();
    if (log.status === 'skipped' || log.status === 'failed') return { log, completed: null };
    const done = completed.find(
      (entry) => (entry.name ?? earlierDefinition?.steps[entry.index]?.name) === step.name,
    );
    // A run finished before re-runs existed kept no results: nothing to take over.
    if (!done) throw notReusable();
    return { log, completed: { ...done, index, name: step.name } };
  });
  return { nextStep: point, steps };
}

/** Puts the taken-over steps into a fresh run's state: their log entries, results and what they provided. */
export function applySeed(state: RunState, seed: ReplaySeed): void {
  for (const { log, completed } of seed.steps) {
    state.logs.push({ ...log, reused: true });
    if (completed) {
      state.scope.results[log.name] = completed.result;
      const provided = state.provide(completed.values);
      state.checkpoint.completed.push({ ...completed, provided });
    } else if (log.status === 'failed') {
      if (log.result !== null && log.result !== undefined) state.scope.results[log.name] = log.result;
      const error = log.error ?? { code: 'STEP_FAILED', message: '' };
      state.checkpoint.lastFailure = { name: log.name, failure: { ...error, retryable: false } };
    }
  }
}
