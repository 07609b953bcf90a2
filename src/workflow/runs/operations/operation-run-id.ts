import { derivedRunId } from '../../engine/model/derived-run-id';

/**
 * The id of the run an operation makes for one of its matched runs (a re-run): the same at every
 * attempt, so a repeat after a crash finds it already made.
 */
export function operationRunId(operationId: string, runId: string): string {
  return derivedRunId(operationId, runId);
}
