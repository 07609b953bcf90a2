/**
 * The SQL the baseline server runs: the same statements the service issues for each figure, so the
 * comparison measures the service's own overhead (routing, auth, validation, mapping), not SQL choices.
 * The grid statements are rendered from the service's own builders (baseline-server.ts).
 */
export const BASELINE_SQL = {
  create: `insert into data_records (config_id, data) values ($1, $2) returning id, config_id, user_id, data, is_active, created_at, updated_at`,
  listCount: `select count(*) as total from data_records where config_id = $1 and is_active and data @> $2::jsonb`,
  listPage: `select id, config_id, user_id, site_id, data, computed_results, is_active, created_at, updated_at
             from data_records where config_id = $1 and is_active and data @> $2::jsonb
             order by created_at desc, id desc limit $3 offset $4`,
  statsCounts: `select count(*) as total,
                  count(*) filter (where created_at >= date_trunc('day', now() at time zone $2) at time zone $2) as today,
                  count(*) filter (where created_at >= date_trunc('week', now() at time zone $2) at time zone $2) as this_week
                from data_records where config_id = $1 and is_active`,
  statsByUser: `select user_id, count(*) as count from data_records where config_id = $1 and is_active
                group by user_id order by count(*) desc, user_id`,
  exportCopy: `copy (select id, created_at, data->>'name', data->>'city', data->>'age', data->>'score', data->>'email',
                 data->>'active', data->>'joined' from data_records where config_id = $1 and is_active
                 order by created_at, id) to stdout with (format csv, header true)`,
} as const;
