import { sql, type SQL } from 'drizzle-orm';
import { appendEvents } from '../../../events/append-events';
import { workflowRuns } from '../../../database/schema';

/**
 * A run's end has one home: the functions of migration 0024. `fdws_finish_run` (a stored run) and
 * `fdws_insert_finished_run` (a run written once, finished) write the run's outcome and, in
 * `fdws_run_ended`, the record's workflow-log entry (as built by `workflowLogEntry`), the held
 * effects and the `workflow.run.finished` event, whose data is `fdws_run_finished_json` (migration
 * 0016): `{run: {id, workflowId, status, message, configId, dataId, userId, startedAt, finishedAt,
 * durationMs}}`. A dry run writes none.
 */

/** The entry a run's end appends to the workflow log of the record it saved. */
export function workflowLogEntry(entry: {
  runId: string | null;
  workflowId: string;
  workflowName?: string;
  status: string;
  steps?: { name: string; type: string; status: string }[];
}): Record<string, unknown> {
  const { runId, workflowId, workflowName, status, steps } = entry;
  return {
    runId,
    workflowId,
    ...(workflowName === undefined ? {} : { workflowName }),
    status,
    at: new Date().toISOString(),
    ...(steps === undefined ? {} : { steps }),
  };
}

/**
 * The event of a run just ended by a cancel before it started (in the cancel's transaction), from
 * its stored row, with the same data as the functions write.
 */
export function cancelledRunEvent(runId: string): SQL {
  return appendEvents(sql`select 'workflow.run.finished', r.site_id, r.config_id, r.user_id, null::jsonb,
      fdws_run_finished_json(row(r.*)::workflow_runs) from ${workflowRuns} r where r.id = ${runId}::uuid`);
}
