ALTER TABLE "workflow_runs" ADD COLUMN "site_id" uuid;--> statement-breakpoint
ALTER TABLE "workflow_runs" ADD COLUMN "message" text;--> statement-breakpoint
ALTER TABLE "workflow_runs" ADD COLUMN "finished_at" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "workflow_runs_user_idx" ON "workflow_runs" USING btree ("user_id","started_at" DESC NULLS LAST);