-- Bulk imports. An upload is parsed into data_import_rows while it arrives (the file is
-- never kept whole, in memory or on disk: the staged rows are what survives a crash), then its valid
-- rows move into data_records by statements that delete what they move, so a row is stored once even
-- when an import is taken over by another instance. Refused rows stay for the report until the
-- import is deleted.
CREATE TABLE "data_import_rows" (
	"import_id" uuid NOT NULL,
	"row_number" integer NOT NULL,
	"data" json,
	"computed_results" json,
	"refusals" jsonb,
	CONSTRAINT "data_import_rows_import_id_row_number_pk" PRIMARY KEY("import_id","row_number")
);
--> statement-breakpoint
CREATE TABLE "data_imports" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"config_id" uuid NOT NULL,
	"site_id" uuid,
	"config_version" integer NOT NULL,
	"user_id" uuid NOT NULL,
	"request" jsonb NOT NULL,
	"mode" text NOT NULL,
	"format" text NOT NULL,
	"status" text NOT NULL,
	"idempotency_key" text,
	"rows_read" integer DEFAULT 0 NOT NULL,
	"rows_refused" integer DEFAULT 0 NOT NULL,
	"rows_stored" integer DEFAULT 0 NOT NULL,
	"error" jsonb,
	"lease_owner" text,
	"lease_until" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "data_import_rows" ADD CONSTRAINT "data_import_rows_import_id_data_imports_id_fk" FOREIGN KEY ("import_id") REFERENCES "public"."data_imports"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "data_imports" ADD CONSTRAINT "data_imports_config_id_form_configs_id_fk" FOREIGN KEY ("config_id") REFERENCES "public"."form_configs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "data_imports" ADD CONSTRAINT "data_imports_site_id_sites_id_fk" FOREIGN KEY ("site_id") REFERENCES "public"."sites"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "data_imports_idempotency_idx" ON "data_imports" USING btree ("user_id","config_id","idempotency_key") WHERE "data_imports"."idempotency_key" is not null;--> statement-breakpoint
CREATE INDEX "data_imports_unfinished_idx" ON "data_imports" USING btree ("created_at") WHERE "data_imports"."status" in ('receiving', 'storing');