-- The outbox of domain events (record changes, finished workflow runs), written by the statement of the
-- change itself and handed to the event consumers (webhooks, workflow triggers) after the commit.
CREATE TABLE IF NOT EXISTS "domain_events" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"seq" bigint GENERATED ALWAYS AS IDENTITY (sequence name "domain_events_seq_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"type" text NOT NULL,
	"site_id" uuid,
	"config_id" uuid,
	"actor_id" uuid,
	"origin" jsonb,
	"data" json NOT NULL,
	"occurred_at" timestamp with time zone DEFAULT now() NOT NULL,
	"available_at" timestamp with time zone DEFAULT now() NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "domain_events_due_idx" ON "domain_events" USING btree ("available_at","seq");
