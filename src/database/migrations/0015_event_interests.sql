CREATE TABLE IF NOT EXISTS "domain_event_interests" (
	"type" text NOT NULL,
	"config_id" uuid,
	"declared_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "domain_event_interests_key" UNIQUE NULLS NOT DISTINCT("type","config_id")
);
--> statement-breakpoint
-- An installation upgraded with webhook subscriptions or workflow triggers wants every event until
-- the dispatcher's reconciliation (at start, then periodically) narrows it after the grace period,
-- so it misses none meanwhile. A new one has neither: it writes no events until it has.
INSERT INTO domain_event_interests (type, config_id)
SELECT type, NULL FROM unnest(ARRAY['record.created', 'record.updated', 'record.deleted', 'record.restored',
  'workflow.run.finished']) AS type
WHERE EXISTS (SELECT 1 FROM webhook_subscriptions)
  OR EXISTS (SELECT 1 FROM workflows WHERE jsonb_typeof(config -> 'triggers') = 'array')
ON CONFLICT DO NOTHING;
--> statement-breakpoint
-- Whether anybody takes events of this type for this configuration (see domain_event_interests).
CREATE OR REPLACE FUNCTION fdws_event_wanted(p_type text, p_config_id uuid) RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT EXISTS (SELECT 1 FROM domain_event_interests
    WHERE type = p_type AND (config_id IS NULL OR config_id = p_config_id))
$$;
--> statement-breakpoint
-- The create of migration 0014, writing its event only when it is wanted.
CREATE OR REPLACE FUNCTION fdws_insert_record(
  p_config_id uuid, p_user_id uuid, p_site_id uuid, p_data jsonb, p_data_keys text[],
  p_computed_results jsonb, p_idempotency_key text, p_actor_id uuid, p_origin jsonb
) RETURNS SETOF data_records
LANGUAGE plpgsql AS $$
DECLARE
  stored data_records;
  entry_id bigint;
  entry_changes jsonb;
BEGIN
  IF p_idempotency_key IS NULL THEN
    INSERT INTO data_records (config_id, user_id, site_id, data, data_keys, computed_results)
    VALUES (p_config_id, p_user_id, p_site_id, p_data, p_data_keys, p_computed_results)
    RETURNING * INTO stored;
  ELSE
    INSERT INTO data_records (config_id, user_id, site_id, data, data_keys, computed_results, idempotency_key)
    VALUES (p_config_id, p_user_id, p_site_id, p_data, p_data_keys, p_computed_results, p_idempotency_key)
    ON CONFLICT (idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
    RETURNING * INTO stored;
    IF NOT FOUND THEN
      RETURN;
    END IF;
  END IF;
  INSERT INTO record_history (record_id, config_id, site_id, action, user_id, origin, changes)
  VALUES (stored.id, stored.config_id, stored.site_id, 'created', p_actor_id, p_origin, fdws_added_fields(stored.data))
  RETURNING id, changes INTO entry_id, entry_changes;
  IF fdws_event_wanted('record.created', stored.config_id) THEN
    INSERT INTO domain_events (type, site_id, config_id, actor_id, origin, data)
    VALUES ('record.created', stored.site_id, stored.config_id, p_actor_id, p_origin,
      json_build_object('record', fdws_record_json(stored), 'changes', entry_changes, 'historyId', entry_id));
  END IF;
  RETURN NEXT stored;
END
$$;
