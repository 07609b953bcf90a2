-- The durable outbox of workflow runs: an effect (a mail now, record webhooks next) is written with
-- the write that commits its run to it and sent after that commit by any instance. The key (run,
-- step, effect index) makes a resend after a crash recognisable (the Message-ID of a mail).
CREATE TABLE IF NOT EXISTS "workflow_effects" (
	"run_id" uuid NOT NULL REFERENCES "workflow_runs"("id") ON DELETE CASCADE,
	"step_index" integer NOT NULL,
	"effect_index" integer NOT NULL,
	"step_name" text NOT NULL,
	"kind" text NOT NULL,
	"payload" jsonb NOT NULL,
	"state" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"last_error" jsonb,
	"available_at" timestamp with time zone DEFAULT now() NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"sent_at" timestamp with time zone,
	CONSTRAINT "workflow_effects_pk" PRIMARY KEY("run_id","step_index","effect_index")
);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "workflow_effects_due_idx" ON "workflow_effects" USING btree ("available_at") WHERE "workflow_effects"."state" = 'pending';
--> statement-breakpoint
-- How often a run was claimed from the queue: a run that throws every time (a poison run) ends failed after a bound.
ALTER TABLE "workflow_runs" ADD COLUMN IF NOT EXISTS "claims" integer DEFAULT 0 NOT NULL;
