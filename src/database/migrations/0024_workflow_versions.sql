-- Every version of a workflow definition, kept immutable (GET /api/workflow/:workflowId/versions).
-- A workflow stored before this migration keeps its current version only (its maker unknown, its
-- time the last change's); earlier versions live on only as the copies their runs keep.
CREATE TABLE "workflow_versions" (
	"workflow_id" uuid NOT NULL,
	"version" integer NOT NULL,
	"name" text NOT NULL,
	"alias" text,
	"description" text,
	"type" text NOT NULL,
	"config" jsonb NOT NULL,
	"permissions" jsonb NOT NULL,
	"tags" jsonb NOT NULL,
	"site_id" uuid,
	"is_active" boolean NOT NULL,
	"author_id" uuid,
	"saved_by" uuid,
	"saved_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "workflow_versions_workflow_id_version_pk" PRIMARY KEY("workflow_id","version")
);
--> statement-breakpoint
ALTER TABLE "workflow_versions" ADD CONSTRAINT "workflow_versions_workflow_id_workflows_id_fk" FOREIGN KEY ("workflow_id") REFERENCES "public"."workflows"("id") ON DELETE no action ON UPDATE no action;
--> statement-breakpoint
INSERT INTO "workflow_versions" ("workflow_id", "version", "name", "alias", "description", "type", "config",
  "permissions", "tags", "site_id", "is_active", "author_id", "saved_by", "saved_at")
SELECT "id", "version", "name", "alias", "description", "type", "config", "permissions", "tags", "site_id",
  "is_active", "author_id", NULL, "updated_at"
FROM "workflows";
