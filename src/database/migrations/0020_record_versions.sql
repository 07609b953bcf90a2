-- Versions for conditional requests (ETag, If-Match): a record's and a configuration's version rises
-- by one with every change. Existing rows start at 1 (a constant default: no table rewrite).
ALTER TABLE "form_configs" ADD COLUMN "version" integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE "data_records" ADD COLUMN "version" integer DEFAULT 1 NOT NULL;
