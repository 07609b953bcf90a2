import { sql, type SQL } from 'drizzle-orm';
import { appendEvents } from '../../../events/append-events';
import { workflowRuns } from '../../../database/schema';
import type { NewRun, RunFinish } from '../model/run-records';

/**
 * The `workflow.run.finished` event of a run's final write, `{run: {id, workflowId, status, message,
 * configId, dataId, userId, startedAt, finishedAt, durationMs}}`, carried by the write itself so the
 * event exists exactly when the run ended. Two forms of one payload: `finishedRunEvent` reads the
 * CTE `finished` (an update of workflow_runs returning its row; migration 0016's
 * `fdws_run_finished_json`, which the end's function `fdws_finish_run` writes too), `insertedRunEvent` the values of a
 * run written finished in one insert, `cancelledRunEvent` the stored row of a run just ended by a
 * cancel before it started (in the cancel's transaction). A dry run writes none.
 */
export function finishedRunEvent(): SQL {
  return eventsOfRuns(sql`finished`);
}

export function cancelledRunEvent(runId: string): SQL {
  return eventsOfRuns(sql`${workflowRuns}`, sql`where r.id = ${runId}::uuid`);
}

/** The event of every run row in `runs` (a CTE or the table, filtered by `where` over `r`). */
function eventsOfRuns(runs: SQL, where: SQL = sql``): SQL {
  return appendEvents(sql`select 'workflow.run.finished', r.site_id, r.config_id, r.user_id, null::jsonb,
      fdws_run_finished_json(row(r.*)::workflow_runs) from ${runs} r ${where}`);
}

export function insertedRunEvent(run: NewRun, outcome: RunFinish, finishedAt: Date): SQL {
  const data = {
    run: {
      id: run.id,
      workflowId: run.workflowId,
      status: outcome.status,
      message: outcome.message,
      configId: run.configId,
      dataId: outcome.dataId,
      userId: run.userId,
      startedAt: run.startedAt.toISOString(),
      finishedAt: finishedAt.toISOString(),
      durationMs: outcome.durationMs,
    },
  };
  return appendEvents(sql`select 'workflow.run.finished', ${run.siteId}::uuid, ${run.configId}::uuid,
      ${run.userId}::uuid, null::jsonb, ${JSON.stringify(data)}::json`);
}
