-- Bounds of event-triggered workflows (README "Event-triggered workflows"): a triggered run keeps the
-- root event of its causal chain, counted for WORKFLOW_TRIGGER_MAX_RUNS_PER_EVENT at every triggered
-- enqueue; a workflow keeps who last saved its definition, whom a trigger with `runAs: "author"` runs as.
ALTER TABLE "workflow_runs" ADD COLUMN "trigger_root" uuid;--> statement-breakpoint
ALTER TABLE "workflows" ADD COLUMN "author_id" uuid;--> statement-breakpoint
CREATE INDEX "workflow_runs_trigger_root_idx" ON "workflow_runs" USING btree ("trigger_root") WHERE "workflow_runs"."trigger_root" is not null;
