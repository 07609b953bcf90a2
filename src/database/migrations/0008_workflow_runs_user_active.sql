-- The runs of one user that are queued or running: counted for the per-user queue bound
-- (WORKFLOW_MAX_QUEUED_PER_USER) at every asynchronous execute, without reading the user's history.
CREATE INDEX IF NOT EXISTS "workflow_runs_user_active_idx" ON "workflow_runs" USING btree ("user_id") WHERE "workflow_runs"."status" in ('queued', 'running');
