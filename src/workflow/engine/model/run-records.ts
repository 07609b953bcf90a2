import type { workflowRuns } from '../../../database/schema';
import type { RunStatus } from './run-model';

/** The stored run records as the engine writes and reads them (workflow_runs). */
export type WorkflowRunRow = typeof workflowRuns.$inferSelect;

/** What a run is started with; the id is chosen by the runner (a synchronous run is written late). */
export interface NewRun {
  id: string;
  workflowId: string;
  userId: string | null;
  siteId: string | null;
  configId: string | null;
  request: Record<string, unknown>;
  startedAt: Date;
  /** A copy of the definition the run runs with, and its version. */
  definition: Record<string, unknown>;
  definitionVersion: number;
  rerunOf: string | null;
  /** A triggered run: the root event of its chain (see `enqueueTriggered`). */
  triggerRoot?: string | null;
}

/** What a run has done so far, written at its first write and at each checkpoint. */
export interface RunProgress {
  nextStep: number;
  stepInFlight: number | null;
  checkpoint: Record<string, unknown>;
  steps: unknown[];
  dataId: string | null;
}

/** A run's final write. */
export interface RunFinish {
  status: Exclude<RunStatus, 'running' | 'queued' | 'waiting'>;
  message: string;
  steps: unknown[];
  dataId: string | null;
  durationMs: number;
  /** What a re-run reuses: the completed steps with their results and what they provided. */
  checkpoint: Record<string, unknown>;
}
