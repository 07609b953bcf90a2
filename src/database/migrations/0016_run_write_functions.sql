-- A run's end as a server-side function, for the reason of migration 0014: the end's statement as
-- CTEs (the run's update, the record's workflow-log entry, the run's event) was parsed and planned
-- on every run; PL/pgSQL keeps its plans per connection, through any pooler.
--
-- The `workflow.run.finished` event's data: `{run: {id, workflowId, status, message, configId,
-- dataId, userId, startedAt, finishedAt, durationMs}}`, instants as ISO 8601 UTC with milliseconds.
CREATE OR REPLACE FUNCTION fdws_run_finished_json(r workflow_runs) RETURNS json
LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
BEGIN
  RETURN json_build_object('run', json_build_object(
    'id', r.id, 'workflowId', r.workflow_id, 'status', r.status, 'message', r.message,
    'configId', r.config_id, 'dataId', r.data_id, 'userId', r.user_id,
    'startedAt', to_char(r.started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'finishedAt', to_char(r.finished_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'durationMs', r.duration_ms));
END
$$;
--> statement-breakpoint
-- Ends a run this instance holds (`p_owner`, still running): its outcome, the entry in the workflow
-- log of the record it saved (as the data module's appendToWorkflowLog writes it), and its event when
-- wanted. False, and nothing written, when the lease was lost.
CREATE OR REPLACE FUNCTION fdws_finish_run(
  p_id uuid, p_owner text, p_status text, p_message text, p_steps jsonb, p_data_id uuid,
  p_duration_ms integer, p_checkpoint jsonb, p_log_entry jsonb
) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  finished workflow_runs;
BEGIN
  UPDATE workflow_runs
  SET status = p_status, message = p_message, steps = p_steps, data_id = p_data_id, duration_ms = p_duration_ms,
    finished_at = now(), checkpoint = p_checkpoint, lease_owner = NULL, lease_until = NULL, step_in_flight = NULL
  WHERE id = p_id AND lease_owner = p_owner AND status = 'running'
  RETURNING * INTO finished;
  IF NOT FOUND THEN
    RETURN false;
  END IF;
  IF p_data_id IS NOT NULL THEN
    UPDATE data_records SET workflow = coalesce(workflow, '[]'::jsonb) || jsonb_build_array(p_log_entry)
    WHERE id = p_data_id;
  END IF;
  IF fdws_event_wanted('workflow.run.finished', finished.config_id) THEN
    INSERT INTO domain_events (type, site_id, config_id, actor_id, origin, data)
    VALUES ('workflow.run.finished', finished.site_id, finished.config_id, finished.user_id, NULL,
      fdws_run_finished_json(finished));
  END IF;
  RETURN true;
END
$$;
--> statement-breakpoint
-- Migration 0015's check as PL/pgSQL: a SQL function called from PL/pgSQL is planned on every call,
-- a PL/pgSQL one keeps its plan.
CREATE OR REPLACE FUNCTION fdws_event_wanted(p_type text, p_config_id uuid) RETURNS boolean
LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
BEGIN
  RETURN EXISTS (SELECT 1 FROM domain_event_interests
    WHERE type = p_type AND (config_id IS NULL OR config_id = p_config_id));
END
$$;
