-- Erasures of a person's data (README "Erasure"): the operation with its matched ids, its next step and a
-- lease (another instance finishes an erasure whose instance died); once done, the audit entry. No erased value.
CREATE TABLE IF NOT EXISTS "erasures" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"kind" text NOT NULL,
	"subject" jsonb NOT NULL,
	"subject_key" text NOT NULL,
	"status" text DEFAULT 'running' NOT NULL,
	"next_step" integer DEFAULT 0 NOT NULL,
	"record_ids" jsonb NOT NULL,
	"run_ids" jsonb NOT NULL,
	"counts" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"requested_by" uuid NOT NULL,
	"lease_owner" text,
	"lease_until" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
-- A repeat of an erasure request finds the latest erasure of its subject.
CREATE INDEX IF NOT EXISTS "erasures_subject_idx" ON "erasures" USING btree ("subject_key","created_at" DESC NULLS LAST);
--> statement-breakpoint
-- GET /api/erasures: the audit log, newest first.
CREATE INDEX IF NOT EXISTS "erasures_created_idx" ON "erasures" USING btree ("created_at" DESC NULLS LAST);
--> statement-breakpoint
-- A run whose input, results and step log an erasure removed.
ALTER TABLE "workflow_runs" ADD COLUMN IF NOT EXISTS "erased_at" timestamp with time zone;
--> statement-breakpoint
-- A history entry whose values an erasure removed (its field names stay).
ALTER TABLE "record_history" ADD COLUMN IF NOT EXISTS "erased_at" timestamp with time zone;
