-- Kept versions of workflow definitions, and the end of a run in one home (both below).
-- Every version of a workflow definition, kept immutable (GET /api/workflow/:workflowId/versions).
-- A workflow stored before this migration keeps its current version only (its maker unknown, its
-- time the last change's); earlier versions live on only as the copies their runs keep.
CREATE TABLE "workflow_versions" (
	"workflow_id" uuid NOT NULL,
	"version" integer NOT NULL,
	"name" text NOT NULL,
	"alias" text,
	"description" text,
	"type" text NOT NULL,
	"config" jsonb NOT NULL,
	"permissions" jsonb NOT NULL,
	"tags" jsonb NOT NULL,
	"site_id" uuid,
	"is_active" boolean NOT NULL,
	"author_id" uuid,
	"saved_by" uuid,
	"saved_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "workflow_versions_workflow_id_version_pk" PRIMARY KEY("workflow_id","version")
);
--> statement-breakpoint
ALTER TABLE "workflow_versions" ADD CONSTRAINT "workflow_versions_workflow_id_workflows_id_fk" FOREIGN KEY ("workflow_id") REFERENCES "public"."workflows"("id") ON DELETE no action ON UPDATE no action;
--> statement-breakpoint
INSERT INTO "workflow_versions" ("workflow_id", "version", "name", "alias", "description", "type", "config",
  "permissions", "tags", "site_id", "is_active", "author_id", "saved_by", "saved_at")
SELECT "id", "version", "name", "alias", "description", "type", "config", "permissions", "tags", "site_id",
  "is_active", "author_id", NULL, "updated_at"
FROM "workflows";
--> statement-breakpoint
-- A run's end in one home: every final write of a run, whether the run was stored before
-- (fdws_finish_run) or is written once, finished (fdws_insert_finished_run), makes the same writes
-- beside the run's row in fdws_run_ended: the record's workflow-log entry, the effects held until
-- the end (into the outbox, `p_effects` as [{step_index, effect_index, step_name, kind, payload}]) and
-- the `workflow.run.finished` event (fdws_run_finished_json, migration 0016).
CREATE OR REPLACE FUNCTION fdws_run_ended(finished workflow_runs, p_log_entry jsonb, p_effects jsonb)
RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  IF finished.data_id IS NOT NULL THEN
    UPDATE data_records SET workflow = coalesce(workflow, '[]'::jsonb) || jsonb_build_array(p_log_entry)
    WHERE id = finished.data_id;
  END IF;
  IF jsonb_array_length(p_effects) > 0 THEN
    -- A key stored already (the same final write made again after a crash) is kept as it is.
    INSERT INTO workflow_effects (run_id, step_index, effect_index, step_name, kind, payload)
    SELECT finished.id, e.step_index, e.effect_index, e.step_name, e.kind, e.payload
    FROM jsonb_to_recordset(p_effects) AS e(step_index int, effect_index int, step_name text, kind text, payload jsonb)
    ON CONFLICT DO NOTHING;
  END IF;
  IF fdws_event_wanted('workflow.run.finished', finished.config_id) THEN
    INSERT INTO domain_events (type, site_id, config_id, actor_id, origin, data)
    VALUES ('workflow.run.finished', finished.site_id, finished.config_id, finished.user_id, NULL,
      fdws_run_finished_json(finished));
  END IF;
END
$$;
--> statement-breakpoint
-- Ends a run this instance holds (`p_owner`, still running). False, and nothing written, when the
-- lease was lost.
CREATE OR REPLACE FUNCTION fdws_finish_run(
  p_id uuid, p_owner text, p_status text, p_message text, p_steps jsonb, p_data_id uuid,
  p_duration_ms integer, p_checkpoint jsonb, p_log_entry jsonb, p_effects jsonb
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
  PERFORM fdws_run_ended(finished, p_log_entry, p_effects);
  RETURN true;
END
$$;
--> statement-breakpoint
-- Migration 0016's form, still called by a process of the previous release during a rolling update.
CREATE OR REPLACE FUNCTION fdws_finish_run(
  p_id uuid, p_owner text, p_status text, p_message text, p_steps jsonb, p_data_id uuid,
  p_duration_ms integer, p_checkpoint jsonb, p_log_entry jsonb
) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
  RETURN fdws_finish_run(p_id, p_owner, p_status, p_message, p_steps, p_data_id, p_duration_ms, p_checkpoint,
    p_log_entry, '[]'::jsonb);
END
$$;
--> statement-breakpoint
-- A run driven inside its request that ended before any write: stored once, finished.
CREATE OR REPLACE FUNCTION fdws_insert_finished_run(
  p_id uuid, p_workflow_id uuid, p_user_id uuid, p_site_id uuid, p_config_id uuid, p_request jsonb,
  p_started_at timestamptz, p_definition jsonb, p_definition_version integer, p_rerun_of uuid,
  p_status text, p_message text, p_steps jsonb, p_data_id uuid, p_duration_ms integer,
  p_checkpoint jsonb, p_finished_at timestamptz, p_log_entry jsonb, p_effects jsonb
) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  finished workflow_runs;
BEGIN
  INSERT INTO workflow_runs (id, workflow_id, user_id, site_id, config_id, request, started_at, definition,
    definition_version, rerun_of, status, message, steps, data_id, duration_ms, checkpoint, finished_at)
  VALUES (p_id, p_workflow_id, p_user_id, p_site_id, p_config_id, p_request, p_started_at, p_definition,
    p_definition_version, p_rerun_of, p_status, p_message, p_steps, p_data_id, p_duration_ms, p_checkpoint,
    p_finished_at)
  RETURNING * INTO finished;
  PERFORM fdws_run_ended(finished, p_log_entry, p_effects);
END
$$;
