-- The record writes' SQL as server-side functions. A create is an insert, its history entry and its
-- domain event; sent as one statement of three data-modifying CTEs it cost PostgreSQL more to parse
-- and plan (every time: statements go unnamed, so a transaction pooler works) than to run. PL/pgSQL
-- keeps the plans of its statements for the life of the connection, through any pooler.
--
-- A record as the API returns it: `_id`, the system fields, `data` in its submitted key order (json,
-- not jsonb, so the order survives; keys not in `data_keys` follow in jsonb's order), instants as ISO
-- 8601 UTC with milliseconds. The payload of the record events (webhooks, workflow triggers).
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
    'deletedAt', to_char(r.deleted_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'));
END
$$;
--> statement-breakpoint
-- The history entry's change of a created record: every field as added, `{field: {after}}`.
CREATE OR REPLACE FUNCTION fdws_added_fields(data jsonb) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
  RETURN (SELECT coalesce(jsonb_object_agg(key, jsonb_build_object('after', value)), '{}'::jsonb)
    FROM jsonb_each(data));
END
$$;
--> statement-breakpoint
-- Inserts a record with its `created` history entry and its `record.created` event (the columns the
-- events module's appendEvents writes), all or nothing; returns the stored row. With an idempotency
-- key already stored, nothing is written and no row returned.
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
  INSERT INTO domain_events (type, site_id, config_id, actor_id, origin, data)
  VALUES ('record.created', stored.site_id, stored.config_id, p_actor_id, p_origin,
    json_build_object('record', fdws_record_json(stored), 'changes', entry_changes, 'historyId', entry_id));
  RETURN NEXT stored;
END
$$;
