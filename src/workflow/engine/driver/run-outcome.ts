import type { RunStatus } from '../model/run-model';
import type { CommittedEffect } from '../../effects/workflow-effects.repository';
import type { RunFinish } from '../model/run-records';
import { redact } from '../model/redaction';
import type { StepLog } from '../model/run-model';
import type { RunSession } from './run-session';
import type { StepFailure } from './step-failure';
import { workflowLogEntry } from '../journal/run-end';

export type FinalStatus = Exclude<RunStatus, 'running' | 'queued' | 'waiting'>;
export type FailedStep = { name: string; failure: StepFailure } | null;

/** What a run answers when it ends (the execute response, before the outbox is asked). */
export interface RunResult {
  success: boolean;
  message: string;
  workflowId: string;
  workflowName: string;
  runId: string | null;
  status: FinalStatus | 'waiting';
  steps: StepLog[];
  data: unknown;
  results: Record<string, unknown>;
}

export function messageOf(status: FinalStatus, failedStep: FailedStep, dryRun: boolean): string {
  if (dryRun)
    return status === 'success'
      ? 'Dry run: nothing was stored, mailed or sent'
      : 'Dry run: a step would fail';
  if (status === 'cancelled') return 'Workflow cancelled';
  if (status === 'success')
    return failedStep
      ? `Workflow completed; step "${failedStep.name}" failed and was continued past`
      : 'Workflow completed';
  const what = status === 'rolled_back' ? 'Workflow rolled back' : 'Workflow failed';
  return `${what}: step "${failedStep?.name}" failed: ${failedStep?.failure.message}`;
}

/** The end of a run: its answer, its row's final values, the record's log entry and its effects. */
export function runEnding(
  session: RunSession,
  status: FinalStatus,
  failedStep: FailedStep,
  secrets: ReadonlySet<string>,
  now: number,
): { result: RunResult; finish: RunFinish; logEntry: Record<string, unknown>; effects: CommittedEffect[] } {
  const { state, workflow, journal, definition } = session;
  // A dry run reports what would happen: a rollback of nothing done is just a failure.
  const reported = session.dryRun && status === 'rolled_back' ? 'failed' : status;
  const result = redact(
    {
      success: reported === 'success',
      message: messageOf(reported, failedStep, session.dryRun),
      workflowId: workflow.id,
      workflowName: workflow.name,
      runId: journal.runId,
      status: reported,
      steps: state.logs,
      data: state.scope.savedData ?? null,
      results: state.scope.results,
    },
    secrets,
  );
  const finish: RunFinish = {
    status: reported,
    message: result.message,
    steps: result.steps,
    dataId: state.checkpoint.dataId,
    durationMs: Math.max(0, Math.round(now - state.checkpoint.startedAt)),
    // Kept for a re-run: the completed steps (results, what they provided); the scope and the held
    // effects go (the input is in the run request, the effects in the outbox).
    checkpoint: redact(
      {
        ...state.checkpoint,
        scope: { input: {}, results: {} },
        effects: [],
        pendingRetry: null,
      },
      secrets,
    ),
  };
  const logEntry = workflowLogEntry({
    runId: journal.runId,
    workflowId: workflow.id,
    workflowName: workflow.name,
    status: reported,
    steps: state.logs.map(({ name, type, status: stepStatus }) => ({ name, type, status: stepStatus })),
  });
  const effects = state.checkpoint.effects.map((effect) => ({
    stepIndex: effect.index,
    effectIndex: effect.seq,
    stepName: effect.step || definition.steps[effect.index]?.name || '',
    kind: effect.kind,
    payload: effect.payload,
  }));
  return { result, finish, logEntry, effects };
}

/** What a run answers when it paused at a step (a run inside its request answers this at once). */
export function waitingResult(
  session: RunSession,
  stepName: string,
  secrets: ReadonlySet<string>,
): RunResult {
  const { state, workflow, journal } = session;
  return redact(
    {
      success: false,
      message: `Workflow waiting for a decision at step "${stepName}"`,
      workflowId: workflow.id,
      workflowName: workflow.name,
      runId: journal.runId,
      status: 'waiting',
      steps: state.logs,
      data: state.scope.savedData ?? null,
      results: state.scope.results,
    },
    secrets,
  );
}
