-- Files of submissions (README "Attachments"): content-addressed blobs (one per SHA-256, null while an
-- upload is written) stored in chunks, and the uploads (attachments) with the record each is linked to.
-- Purging a record removes its attachments (cascade); the attachments cleanup removes blobs nothing refers to.
CREATE TABLE "attachment_blob_chunks" (
	"blob_id" uuid NOT NULL,
	"seq" integer NOT NULL,
	"data" "bytea" NOT NULL,
	CONSTRAINT "attachment_blob_chunks_blob_id_seq_pk" PRIMARY KEY("blob_id","seq")
);
--> statement-breakpoint
CREATE TABLE "attachment_blobs" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"sha256" text,
	"size" bigint DEFAULT 0 NOT NULL,
	"chunk_size" integer NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "attachments" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"blob_id" uuid NOT NULL,
	"config_id" uuid NOT NULL,
	"field" text NOT NULL,
	"site_id" uuid,
	"uploaded_by" uuid,
	"filename" text NOT NULL,
	"media_type" text NOT NULL,
	"size" bigint NOT NULL,
	"sha256" text NOT NULL,
	"record_id" uuid,
	"unlinked_since" timestamp with time zone DEFAULT now(),
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "attachment_blob_chunks" ADD CONSTRAINT "attachment_blob_chunks_blob_id_attachment_blobs_id_fk" FOREIGN KEY ("blob_id") REFERENCES "public"."attachment_blobs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "attachments" ADD CONSTRAINT "attachments_blob_id_attachment_blobs_id_fk" FOREIGN KEY ("blob_id") REFERENCES "public"."attachment_blobs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "attachments" ADD CONSTRAINT "attachments_record_id_data_records_id_fk" FOREIGN KEY ("record_id") REFERENCES "public"."data_records"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "attachment_blobs_sha256_key" ON "attachment_blobs" USING btree ("sha256");--> statement-breakpoint
CREATE INDEX "attachment_blobs_unfinished_idx" ON "attachment_blobs" USING btree ("created_at") WHERE "attachment_blobs"."sha256" is null;--> statement-breakpoint
CREATE INDEX "attachments_record_idx" ON "attachments" USING btree ("record_id");--> statement-breakpoint
CREATE INDEX "attachments_blob_idx" ON "attachments" USING btree ("blob_id");--> statement-breakpoint
CREATE INDEX "attachments_uploader_idx" ON "attachments" USING btree ("uploaded_by","created_at");--> statement-breakpoint
CREATE INDEX "attachments_unlinked_idx" ON "attachments" USING btree ("unlinked_since") WHERE "attachments"."record_id" is null;
--> statement-breakpoint
-- Chunks are mostly compressed media already: stored out of line without a compression attempt.
ALTER TABLE "attachment_blob_chunks" ALTER COLUMN "data" SET STORAGE EXTERNAL;
