-- CSV cells written by PostgreSQL (COPY ... TO STDOUT (FORMAT csv)) byte for byte as the service
-- writes them in JavaScript (`cellText` in src/export/export-format.ts), which reads `data` the way
-- node-postgres parses jsonb: with JSON.parse. Only COPY's quoting is left to COPY, which quotes
-- exactly the cells the service quotes (a comma, double quote, CR or LF) except the empty string,
-- which it quotes as "": an empty string is therefore returned as NULL (an empty cell).

-- A JSON number's text as JavaScript writes it (Number.prototype.toString): PostgreSQL prints
-- numerics in plain notation, JavaScript from 1e21 up and below 1e-6 with an exponent
-- (1000000000000000000000 -> 1e+21, 0.0000001 -> 1e-7). Numbers stored through the API come from
-- JavaScript, so their digits are already JavaScript's; other digits are kept as stored.
CREATE FUNCTION fdws_js_number_text(number_text text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT CASE
    WHEN big IS NOT NULL THEN
      big[1] || left(rtrim(big[2] || coalesce(big[3], ''), '0'), 1)
      || coalesce(nullif('.' || substr(rtrim(big[2] || coalesce(big[3], ''), '0'), 2), '.'), '')
      || 'e+' || (length(big[2]) - 1)
    WHEN small IS NOT NULL THEN
      small[1] || left(rtrim(small[3], '0'), 1)
      || coalesce(nullif('.' || substr(rtrim(small[3], '0'), 2), '.'), '')
      || 'e-' || (length(small[2]) + 1)
    ELSE number_text
  END
  FROM regexp_match(number_text, '^(-?)([1-9][0-9]{21,})(?:\.([0-9]*))?$') AS big,
       regexp_match(number_text, '^(-?)0\.(0{6,})([1-9][0-9]*)$') AS small
$$;
--> statement-breakpoint
-- Compact JSON text of a value as JSON.stringify writes it: no spaces (jsonb::text has them), numbers
-- as above, and object keys in JavaScript's order: integer-like keys ("0".."4294967294") first in
-- ascending order, then the others in jsonb's order (the order JSON.parse meets them in jsonb's text).
-- An exact walk of the value, but slow (about 200 us a value): fdws_json_text needs it only for the
-- values whose text has an integer-like key or a number written with an exponent.
CREATE FUNCTION fdws_json_text_walk(value jsonb) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT CASE jsonb_typeof(value)
    WHEN 'object' THEN '{' || coalesce((
      SELECT string_agg(to_jsonb(member.key)::text || ':' || fdws_json_text_walk(member.value), ','
                        ORDER BY CASE WHEN member.key ~ '^(0|[1-9][0-9]{0,9})$'
                                      THEN nullif(least(member.key::bigint, 4294967295), 4294967295) END
                                 NULLS LAST,
                                 member.position)
      FROM jsonb_each(value) WITH ORDINALITY AS member(key, value, position)), '') || '}'
    WHEN 'array' THEN '[' || coalesce((
      SELECT string_agg(fdws_json_text_walk(element.value), ',' ORDER BY element.position)
      FROM jsonb_array_elements(value) WITH ORDINALITY AS element(value, position)), '') || ']'
    WHEN 'number' THEN fdws_js_number_text(value::text)
    ELSE value::text
  END
$$;
--> statement-breakpoint
-- The same text, fast (a few us a value): jsonb's own text differs from JSON.stringify's only by the
-- space after each separator (", " and ": " outside strings, which the expression removes while
-- skipping over strings), unless an object has an integer-like key (JavaScript moves those first) or
-- a number needs an exponent. The check may also match inside a string: the walk is then merely
-- slower, never different.
CREATE FUNCTION fdws_json_text(value jsonb) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
  text_value text := value::text;
BEGIN
  IF text_value ~ '"(0|[1-9][0-9]{0,9})": |[0-9]{22}|0\.000000' THEN
    RETURN fdws_json_text_walk(value);
  END IF;
  RETURN regexp_replace(text_value, '("(?:[^"\\]|\\.)*")|([,:]) ', '\1\2', 'g');
END
$$;
--> statement-breakpoint
-- The text of a field value's CSV cell: strings as they are, numbers and booleans as JavaScript
-- writes them, objects and arrays as compact JSON; NULL (an empty cell) for null, a missing field and
-- the empty string.
CREATE FUNCTION fdws_csv_text(value jsonb) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
  CASE jsonb_typeof(value)
    WHEN 'string' THEN RETURN nullif(value #>> '{}', '');
    WHEN 'number' THEN RETURN fdws_js_number_text(value::text);
    WHEN 'boolean' THEN RETURN value::text;
    WHEN 'null' THEN RETURN NULL;
    ELSE RETURN fdws_json_text(value);
  END CASE;
END
$$;
--> statement-breakpoint
-- fdws_csv_text(record_data -> field), fast: `value_text` is `record_data ->> field`, already read by
-- the caller, which is the cell itself for nearly every value; only text that may be an object, an
-- array or a number JavaScript writes with an exponent is looked at again. PostgreSQL inlines this
-- function into the statement (one SELECT of one expression, IMMUTABLE, not STRICT), so it costs no
-- call per cell; `value_text` is read several times, so it must be a plain column of a subquery.
CREATE FUNCTION fdws_csv_cell(value_text text, record_data jsonb, field text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE
    WHEN CASE ascii(value_text)
           WHEN 123 THEN true
           WHEN 91 THEN true
           WHEN 45 THEN value_text ~ '^-([1-9][0-9]{21}|0\.000000)'
           WHEN 48 THEN starts_with(value_text, '0.000000')
           ELSE octet_length(value_text) >= 22 AND value_text ~ '^[1-9][0-9]{21}'
         END
    THEN fdws_csv_text(record_data -> field)
    ELSE nullif(value_text, '')
  END
$$;
