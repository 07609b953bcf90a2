-- Webhook subscriptions (admin): a URL, the event types it wants, an optional configuration and site, and
-- its signing secret; during a rotation's grace period the previous secret signs as well.
CREATE TABLE IF NOT EXISTS "webhook_subscriptions" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"url" text NOT NULL,
	"events" text[] NOT NULL,
	"config_id" uuid,
	"site_id" uuid,
	"description" text,
	"secret" text NOT NULL,
	"previous_secret" text,
	"previous_secret_expires_at" timestamp with time zone,
	"enabled" boolean DEFAULT true NOT NULL,
	"disabled_reason" text,
	"disabled_at" timestamp with time zone,
	"failing_since" timestamp with time zone,
	"created_by" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
-- The webhook outbox: one row per domain event and matching subscription (or per redelivery), its body
-- frozen when written so every attempt signs the same bytes; claimed with SKIP LOCKED and a lease.
CREATE TABLE IF NOT EXISTS "webhook_deliveries" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"subscription_id" uuid NOT NULL REFERENCES "webhook_subscriptions"("id") ON DELETE CASCADE,
	"event_id" uuid NOT NULL,
	"event_type" text NOT NULL,
	"body" text NOT NULL,
	"state" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"available_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_error" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"sent_at" timestamp with time zone,
	"redelivery_of" uuid
);
--> statement-breakpoint
-- One delivery per event and subscription (a batch of events handed out twice inserts nothing twice);
-- redeliveries repeat the event id on purpose.
CREATE UNIQUE INDEX IF NOT EXISTS "webhook_deliveries_event_uq" ON "webhook_deliveries" USING btree ("subscription_id","event_id") WHERE "webhook_deliveries"."redelivery_of" is null;
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "webhook_deliveries_due_idx" ON "webhook_deliveries" USING btree ("available_at") WHERE "webhook_deliveries"."state" = 'pending';
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "webhook_deliveries_subscription_idx" ON "webhook_deliveries" USING btree ("subscription_id","created_at");
--> statement-breakpoint
-- Every attempt of a delivery: its time, the answer's status (null without an answer), duration, error and
-- the first 1 KB of the answer.
CREATE TABLE IF NOT EXISTS "webhook_attempts" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"delivery_id" uuid NOT NULL REFERENCES "webhook_deliveries"("id") ON DELETE CASCADE,
	"attempt" integer NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	"status" integer,
	"duration_ms" integer NOT NULL,
	"error_code" text,
	"error_message" text,
	"response" text
);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "webhook_attempts_delivery_idx" ON "webhook_attempts" USING btree ("delivery_id","attempt");
