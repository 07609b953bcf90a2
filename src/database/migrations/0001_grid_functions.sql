-- Date handling of the grid protocol (docs/grid-protocol.md section 5): a string is a date when it is
-- ISO 8601 (YYYY-MM-DD or YYYY-MM-DDTHH:mm[:ss[.f+]][Z|±hh:mm]) and a real calendar date; a date
-- alone is 00:00 UTC and a date-time without a zone is UTC. Anything else is not a date (NULL).
CREATE OR REPLACE FUNCTION fdws_parse_instant(value text) RETURNS timestamptz
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
  RETURN (CASE
    WHEN length(value) = 10 THEN value || 'T00:00:00Z'
    WHEN value ~ '(Z|[+-]\d{2}:\d{2})$' THEN value
    ELSE value || 'Z'
  END)::timestamptz;
EXCEPTION WHEN others THEN
  RETURN NULL;
END
$$;
--> statement-breakpoint
-- Inlinable wrapper: only strings shaped like ISO dates reach the (slower, exception-guarded) parser.
CREATE OR REPLACE FUNCTION fdws_instant(value text) RETURNS timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE
    WHEN value ~ '^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?)?$' THEN fdws_parse_instant(value)
  END
$$;
