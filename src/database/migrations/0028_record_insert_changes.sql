-- The create of migration 0021 with its `created` entry's changes ({field: {after: value}}, what
-- fdws_added_fields builds from the stored data) as an argument: the service has the data at hand and
-- builds the same document for less than the database's jsonb_each and jsonb_object_agg cost, about a
-- tenth of this function's work (bench/README.md, "2026-11-30: the created entry's changes built by the
-- service"). A new argument makes a new function.
CREATE OR REPLACE FUNCTION fdws_insert_record(
  p_config_id uuid, p_config_version integer, p_user_id uuid, p_site_id uuid, p_data jsonb,
  p_data_keys text[], p_computed_results jsonb, p_idempotency_key text, p_actor_id uuid, p_origin jsonb, p_changes jsonb
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
    p_changes, stored.config_version)
  RETURNING id, changes INTO entry_id, entry_changes;
  IF fdws_event_wanted('record.created', stored.config_id) THEN
    INSERT INTO domain_events (type, site_id, config_id, actor_id, origin, data)
    VALUES ('record.created', stored.site_id, stored.config_id, p_actor_id, p_origin,
      json_build_object('record', fdws_record_json(stored), 'changes', entry_changes, 'historyId', entry_id));
  END IF;
  RETURN NEXT stored;
END
$$;
--> statement-breakpoint
-- The ten-argument create stays for instances of the previous version still running during a rolling
-- upgrade; it now builds the changes as before and hands them to the one home above.
CREATE OR REPLACE FUNCTION fdws_insert_record(
  p_config_id uuid, p_config_version integer, p_user_id uuid, p_site_id uuid, p_data jsonb,
  p_data_keys text[], p_computed_results jsonb, p_idempotency_key text, p_actor_id uuid, p_origin jsonb
) RETURNS SETOF data_records
LANGUAGE sql AS $$
  SELECT * FROM fdws_insert_record(p_config_id, p_config_version, p_user_id, p_site_id, p_data, p_data_keys,
    p_computed_results, p_idempotency_key, p_actor_id, p_origin, fdws_added_fields(p_data))
$$;
