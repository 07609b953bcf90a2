-- Record lifecycle: a trash (deleted_at, restorable for RECORD_TRASH_DAYS, then purged)
-- and an append-only history of every create, update, delete and restore. History rows keep no
-- foreign key to data_records: they outlive the record's purge.
CREATE TABLE "record_history" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "record_history_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"record_id" uuid NOT NULL,
	"config_id" uuid NOT NULL,
	"site_id" uuid,
	"action" text NOT NULL,
	"user_id" uuid,
	"origin" jsonb,
	"changes" jsonb NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "data_records" ADD COLUMN "deleted_at" timestamp with time zone;--> statement-breakpoint
-- Records deleted before this migration were kept for ever: their trash period starts now, so an
-- upgrade purges nothing at once and each gets RECORD_TRASH_DAYS to be restored.
UPDATE "data_records" SET "deleted_at" = now() WHERE NOT "is_active" AND "deleted_at" IS NULL;--> statement-breakpoint
CREATE INDEX "record_history_record_idx" ON "record_history" USING btree ("record_id","id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "data_records_trash_idx" ON "data_records" USING btree ("config_id","deleted_at") WHERE not "data_records"."is_active";
