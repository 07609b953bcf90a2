-- Drafts (README "Drafts"): a record saved with its types checked but not its required fields,
-- rules or computed values, counted nowhere until it is submitted. Every existing record is
-- submitted: the column's default fills it without rewriting a row.
ALTER TABLE "data_records" ADD COLUMN "is_draft" boolean DEFAULT false NOT NULL;--> statement-breakpoint
-- Lists, counts and the save limit read submitted records only: their indexes leave drafts out, so
-- a count stays an index-only scan. Rebuilding them locks writes to data_records while it runs.
DROP INDEX "data_records_config_created_idx";--> statement-breakpoint
DROP INDEX "data_records_config_user_idx";--> statement-breakpoint
CREATE INDEX "data_records_config_created_idx" ON "data_records" USING btree ("config_id","created_at" DESC NULLS LAST) WHERE "data_records"."is_active" and not "data_records"."is_draft";--> statement-breakpoint
CREATE INDEX "data_records_config_user_idx" ON "data_records" USING btree ("config_id","user_id") WHERE "data_records"."is_active" and not "data_records"."is_draft";--> statement-breakpoint
CREATE INDEX "data_records_drafts_idx" ON "data_records" USING btree ("config_id","user_id") WHERE "data_records"."is_active" and "data_records"."is_draft";--> statement-breakpoint
CREATE INDEX "data_records_draft_age_idx" ON "data_records" USING btree ("updated_at") WHERE "data_records"."is_active" and "data_records"."is_draft";--> statement-breakpoint
-- The record as the API returns it (migration 0021), with `status: "draft"` on a draft (a
-- submitted record has no status field, as in the API's answers): the payload of record events.
CREATE OR REPLACE FUNCTION fdws_record_json(r data_records) RETURNS json
LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
DECLARE
  fields json;
BEGIN
  fields := coalesce((
    SELECT json_object_agg(k.key, r.data -> k.key ORDER BY k.n) FROM (
      SELECT key, n FROM unnest(r.data_keys) WITH ORDINALITY AS u(key, n) WHERE r.data ? key
      UNION ALL
      SELECT key, 9223372036854775807 FROM jsonb_object_keys(r.data) AS key
      WHERE r.data_keys IS NULL OR NOT (key = ANY(r.data_keys))
    ) AS k), '{}'::json);
  IF r.is_draft THEN
    RETURN json_build_object(
      '_id', r.id, 'configId', r.config_id, 'userId', r.user_id, 'siteId', r.site_id, 'data', fields,
      'computedResults', r.computed_results, 'isActive', r.is_active, 'status', 'draft',
      'createdAt', to_char(r.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
      'updatedAt', to_char(r.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
      'deletedAt', to_char(r.deleted_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
      'version', r.version, 'configVersion', r.config_version);
  END IF;
  RETURN json_build_object(
    '_id', r.id, 'configId', r.config_id, 'userId', r.user_id, 'siteId', r.site_id, 'data', fields,
    'computedResults', r.computed_results, 'isActive', r.is_active,
    'createdAt', to_char(r.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'updatedAt', to_char(r.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'deletedAt', to_char(r.deleted_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'version', r.version, 'configVersion', r.config_version);
END
$$;
