-- Bulk operations on a workflow's runs (cancel, re-run): the matched run ids, progress, and a lease so
-- another instance finishes an operation whose instance died.
CREATE TABLE IF NOT EXISTS "workflow_operations" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"workflow_id" uuid NOT NULL REFERENCES "workflows"("id"),
	"kind" text NOT NULL,
	"status" text DEFAULT 'running' NOT NULL,
	"request" jsonb NOT NULL,
	"run_ids" jsonb NOT NULL,
	"matched" integer NOT NULL,
	"done" integer DEFAULT 0 NOT NULL,
	"failed" integer DEFAULT 0 NOT NULL,
	"failures" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"user_id" uuid,
	"lease_owner" text,
	"lease_until" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
-- The queue also holds runs waiting for a decision (an approval step): taken when their deadline is due.
DROP INDEX IF EXISTS "workflow_runs_queue_idx";
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "workflow_runs_queue_idx" ON "workflow_runs" USING btree ("available_at") WHERE "workflow_runs"."status" in ('queued', 'running', 'waiting');
--> statement-breakpoint
-- A run keeps the definition it runs with (resumed and re-run with it after the workflow changed) and its version.
ALTER TABLE "workflow_runs" ADD COLUMN IF NOT EXISTS "definition" jsonb;
--> statement-breakpoint
ALTER TABLE "workflow_runs" ADD COLUMN IF NOT EXISTS "definition_version" integer;
--> statement-breakpoint
-- The run a re-run repeats.
ALTER TABLE "workflow_runs" ADD COLUMN IF NOT EXISTS "rerun_of" uuid;
--> statement-breakpoint
-- Rises at every update of a definition.
ALTER TABLE "workflows" ADD COLUMN IF NOT EXISTS "version" integer DEFAULT 1 NOT NULL;
--> statement-breakpoint
-- GET /api/workflow/runs for an admin (no workflow, no user to narrow by): newest first by page.
CREATE INDEX IF NOT EXISTS "workflow_runs_started_idx" ON "workflow_runs" USING btree ("started_at" DESC NULLS LAST,"id" DESC NULLS LAST);
