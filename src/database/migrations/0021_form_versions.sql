-- Form versions: every version of a configuration, immutable, written in the
-- transaction of the change that makes it; each record's configVersion (the version it was last
-- validated against) and each history entry's.
CREATE TABLE "form_config_versions" (
	"config_id" uuid NOT NULL,
	"version" integer NOT NULL,
	"action" text NOT NULL,
	"restored_from" integer,
	"changed_parts" text[] NOT NULL,
	"author_id" uuid,
	"title" text NOT NULL,
	"type" text NOT NULL,
	"tags" jsonb NOT NULL,
	"site_id" uuid,
	"description" text,
	"schema" json,
	"validation_rules" jsonb NOT NULL,
	"computed_rules" jsonb NOT NULL,
	"preferences" jsonb NOT NULL,
	"definition" json,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "form_config_versions_pkey" PRIMARY KEY("config_id","version")
);
--> statement-breakpoint
-- A constant default: adding the column rewrites no row. Then the records of a configuration that
-- had changed before versions came in (version above 1) get its current version, the one they can be
-- attributed to: no earlier version was kept, and every record was valid against the current rules
-- when last written only if the rules never tightened, which cannot be told afterwards (README "Form
-- versions").
ALTER TABLE "data_records" ADD COLUMN "config_version" integer DEFAULT 1 NOT NULL;--> statement-breakpoint
UPDATE "data_records" SET "config_version" = "form_configs"."version"
FROM "form_configs" WHERE "form_configs"."id" = "data_records"."config_id" AND "form_configs"."version" <> 1;--> statement-breakpoint
-- Entries written before form versions stay without one (null): which version an old change ran
-- against is not known.
ALTER TABLE "record_history" ADD COLUMN "config_version" integer;--> statement-breakpoint
ALTER TABLE "form_config_versions" ADD CONSTRAINT "form_config_versions_config_id_form_configs_id_fk" FOREIGN KEY ("config_id") REFERENCES "public"."form_configs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
-- Every configuration's current content becomes its current version (`recorded`); earlier versions
-- were not kept.
INSERT INTO "form_config_versions" ("config_id", "version", "action", "restored_from", "changed_parts",
  "author_id", "title", "type", "tags", "site_id", "description", "schema", "validation_rules",
  "computed_rules", "preferences", "definition", "created_at")
SELECT "id", "version", 'recorded', NULL, '{}'::text[], "created_by", "title", "type", "tags", "site_id",
  "description", "schema", "validation_rules", "computed_rules", "preferences", "definition", "updated_at"
FROM "form_configs";
--> statement-breakpoint
-- The record as the API returns it (migration 0014), with its version and configVersion: the payload
-- of the record events (webhooks, workflow triggers and the run input's savedData).
CREATE OR REPLACE FUNCTION fdws_record_json(r data_records) RETURNS json
LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
BEGIN
  RETURN json_build_object(
    '_id', r.id, 'configId', r.config_id, 'userId', r.user_id, 'siteId', r.site_id,
    'data', coalesce((
      SELECT json_object_agg(k.key, r.data -> k.key ORDER BY k.n) FROM (
        SELECT key, n FROM unnest(r.data_keys) WITH ORDINALITY AS u(key, n) WHERE r.data ? key
        UNION ALL
        SELECT key, 9223372036854775807 FROM jsonb_object_keys(r.data) AS key
        WHERE r.data_keys IS NULL OR NOT (key = ANY(r.data_keys))
      ) AS k), '{}'::json),
    'computedResults', r.computed_results, 'isActive', r.is_active,
    'createdAt', to_char(r.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'updatedAt', to_char(r.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'deletedAt', to_char(r.deleted_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'version', r.version, 'configVersion', r.config_version);
END
$$;
--> statement-breakpoint
-- The create of migration 0015 with the configuration version the record was validated against,
-- stored on the record and its `created` entry. A new argument makes a new function: the old one goes.
DROP FUNCTION IF EXISTS fdws_insert_record(uuid, uuid, uuid, jsonb, text[], jsonb, text, uuid, jsonb);
--> statement-breakpoint
CREATE OR REPLACE FUNCTION fdws_insert_record(
  p_config_id uuid, p_config_version integer, p_user_id uuid, p_site_id uuid, p_data jsonb,
  p_data_keys text[], p_computed_results jsonb, p_idempotency_key text, p_actor_id uuid, p_origin jsonb
) RETURNS SETOF data_records
LANGUAGE plpgsql AS $$
DECLARE
  stored data_records;
  entry_id bigint;
  entry_changes jsonb;
BEGIN
  IF p_idempotency_key IS NULL THEN
    INSERT INTO data_records (config_id, config_version, user_id, site_id, data, data_keys, computed_results)
    VALUES (p_config_id, p_config_version, p_user_id, p_site_id, p_data, p_data_keys, p_computed_results)
    RETURNING * INTO stored;
  ELSE
    INSERT INTO data_records (config_id, config_version, user_id, site_id, data, data_keys, computed_results,
      idempotency_key)
    VALUES (p_config_id, p_config_version, p_user_id, p_site_id, p_data, p_data_keys, p_computed_results,
      p_idempotency_key)
    ON CONFLICT (idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
    RETURNING * INTO stored;
    IF NOT FOUND THEN
      RETURN;
    END IF;
  END IF;
  INSERT INTO record_history (record_id, config_id, site_id, action, user_id, origin, changes, config_version)
  VALUES (stored.id, stored.config_id, stored.site_id, 'created', p_actor_id, p_origin,
    fdws_added_fields(stored.data), stored.config_version)
  RETURNING id, changes INTO entry_id, entry_changes;
  IF fdws_event_wanted('record.created', stored.config_id) THEN
    INSERT INTO domain_events (type, site_id, config_id, actor_id, origin, data)
    VALUES ('record.created', stored.site_id, stored.config_id, p_actor_id, p_origin,
      json_build_object('record', fdws_record_json(stored), 'changes', entry_changes, 'historyId', entry_id));
  END IF;
  RETURN NEXT stored;
END
$$;
