/**
 * The baseline's SQL: what a PostgreSQL expert writes by hand for each figure's answer, knowing the
 * benchmark data (typed fields, one configuration) and the indexes of the schema. It is written here
 * on purpose and never imported from or shaped after the service's query builders: a baseline that
 * runs the service's own statements cannot reveal a slow one (docs/design.md section 8).
 */
const COLUMNS = `id, config_id, user_id, site_id, data, computed_results, is_active, created_at, updated_at`;

export const BASELINE_SQL = {
  /** The workflow baseline's table of runs (one row per run, its steps as JSON), made at start. */
  createRunsTable: `create table if not exists baseline_workflow_runs (
                      id uuid primary key default gen_random_uuid(), record_id uuid not null,
                      status text not null, steps jsonb not null,
                      started_at timestamptz not null, finished_at timestamptz not null default now())`,
  /** The record of a workflow's save: the body and its computed values. */
  createWithComputed: `insert into data_records (config_id, data, computed_results) values ($1, $2, $3)
                       returning id, created_at`,
  /** The run, written once it has ended. */
  insertRun: `insert into baseline_workflow_runs (record_id, status, steps, started_at)
              values ($1, 'success', $2, $3) returning id`,

  /** A bare insert of the submitted body. */
  create: `insert into data_records (config_id, data) values ($1, $2)
           returning id, config_id, user_id, data, is_active, created_at, updated_at`,

  /** list: equality on a data field, exact total; count and page run in parallel on two connections. */
  listCount: `select count(*) as total from data_records
              where config_id = $1 and is_active and data ->> 'city' = $2`,
  listPage: `select ${COLUMNS} from data_records
             where config_id = $1 and is_active and data ->> 'city' = $2
             order by created_at desc, id desc limit $3 offset $4`,

  /**
   * grid: `age > $2`, `name contains $3`, sorted by score descending (ties by creation, then id),
   * with the total: page and count from one scan (a window count), cheaper than scanning twice.
   */
  gridPage: `select ${COLUMNS}, count(*) over () as total from data_records
             where config_id = $1 and is_active
               and (data ->> 'age')::numeric > $2 and strpos(lower(data ->> 'name'), $3) > 0
             order by (data ->> 'score')::numeric desc, created_at, id limit $4 offset $5`,
  /** Only when the page is empty (skip past the end) is the count asked on its own. */
  gridCount: `select count(*) as total from data_records
              where config_id = $1 and is_active
                and (data ->> 'age')::numeric > $2 and strpos(lower(data ->> 'name'), $3) > 0`,

  /** stats: four index-only counts, run in parallel. */
  statsTotal: `select count(*) as n from data_records where config_id = $1 and is_active`,
  statsSince: `select count(*) as n from data_records where config_id = $1 and is_active
               and created_at >= date_trunc($2, now() at time zone $3) at time zone $3`,
  statsByUser: `select user_id, count(*) as n from data_records where config_id = $1 and is_active
                group by user_id order by n desc, user_id`,

  /**
   * export: COPY of the fields of the first record, oldest first. COPY takes no bind parameters; the
   * configuration id is checked to be a UUID before it is written into the statement.
   */
  exportCopy: (configId: string) =>
    `copy (select id, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                  data ->> 'name', data ->> 'city', data ->> 'age', data ->> 'score', data ->> 'email',
                  data ->> 'active', data ->> 'joined'
           from data_records where config_id = '${configId}' and is_active
           order by created_at, id) to stdout with (format csv, header true)`,
} as const;
