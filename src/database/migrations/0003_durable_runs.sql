CREATE TABLE "idempotency_keys" (
	"user_id" uuid NOT NULL,
	"route" text NOT NULL,
	"key" text NOT NULL,
	"body_hash" text NOT NULL,
	"state" text NOT NULL,
	"response_status" integer,
	"response_body" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	CONSTRAINT "idempotency_keys_user_id_route_key_pk" PRIMARY KEY("user_id","route","key")
);
--> statement-breakpoint
ALTER TABLE "data_records" ADD COLUMN "idempotency_key" text;--> statement-breakpoint
ALTER TABLE "workflow_runs" ADD COLUMN "request" jsonb;--> statement-breakpoint
ALTER TABLE "workflow_runs" ADD COLUMN "checkpoint" jsonb;--> statement-breakpoint
ALTER TABLE "workflow_runs" ADD COLUMN "next_step" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "workflow_runs" ADD COLUMN "step_in_flight" integer;--> statement-breakpoint
ALTER TABLE "workflow_runs" ADD COLUMN "available_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "workflow_runs" ADD COLUMN "lease_owner" text;--> statement-breakpoint
ALTER TABLE "workflow_runs" ADD COLUMN "lease_until" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "workflow_runs" ADD COLUMN "cancel_requested" boolean DEFAULT false NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "data_records_idempotency_key_idx" ON "data_records" USING btree ("idempotency_key") WHERE "data_records"."idempotency_key" is not null;--> statement-breakpoint
CREATE INDEX "workflow_runs_queue_idx" ON "workflow_runs" USING btree ("available_at") WHERE "workflow_runs"."status" in ('queued', 'running');