-- fdws_instant runs on every string a grid filter or sort compares as a possible date, three times
-- per row when sorting by a text field. Its anchored pattern is costly even when it fails at once;
-- LIKE '____-__-__%' rejects names, cities and other non-dates first. It is a necessary condition of
-- the pattern (four characters, '-', two, '-', two), so the result does not change.
CREATE OR REPLACE FUNCTION fdws_instant(value text) RETURNS timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE
    WHEN value LIKE '____-__-__%'
     AND value ~ '^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?)?$' THEN fdws_parse_instant(value)
  END
$$;
