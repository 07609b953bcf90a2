import { Client } from 'pg';
import { DatabaseClient } from '../../src/database/database-client';

export const BENCH_SERVER_URL =
  process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/**
 * A throw-away database on the benchmark server, migrated by this checkout (unless `migrated` is
 * false: an older build then migrates it to its own schema when it starts); `drop()` removes it.
 */
export async function createBenchDatabase({ migrated = true } = {}): Promise<{
  url: string;
  drop: () => Promise<void>;
}> {
  const name = `bench_${Date.now()}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = new Client({ connectionString: BENCH_SERVER_URL });
  await admin.connect();
  await admin.query(
    `create database "${name}" encoding 'UTF8' lc_ctype 'C.UTF-8' lc_collate 'C.UTF-8' template template0`,
  );
  await admin.end();
  const url = withDatabase(BENCH_SERVER_URL, name);
  if (migrated) {
    const client = await DatabaseClient.open({ databaseUrl: url, dataDir: '', poolSize: 1 });
    await client.migrate();
    await client.close();
  }
  return {
    url,
    drop: async () => {
      const dropper = new Client({ connectionString: BENCH_SERVER_URL });
      await dropper.connect();
      await dropper.query(`drop database if exists "${name}" with (force)`);
      await dropper.end();
    },
  };
}

export const CITIES = [
  'Budapest',
  'Debrecen',
  'Szeged',
  'Pécs',
  'Győr',
  'Zürich',
  'Paris',
  'Wien',
  'Praha',
  'Berlin',
];

/**
 * Seeds one configuration with `count` active records spread over 50 users and the last 365 days,
 * in one SQL statement (generate_series), the way docs/design.md section 8 asks.
 */
export async function seedRecords(
  url: string,
  count: number,
): Promise<{ configId: string; userIds: string[] }> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const config = await client.query(
      `insert into form_configs (title, type, tags, preferences, schema)
       values ('Benchmark form', 'form', '["bench"]', '{"saveLimit":null,"allowEdit":true,"allowDelete":true,"storeComputedResults":false}', null)
       returning id`,
    );
    const configId: string = config.rows[0].id;
    const users = await client.query(
      `insert into users (email, name, password_hash, role)
       select 'bench' || g || '@example.com', 'Bench ' || g, 'x', 'user' from generate_series(1, 50) g returning id`,
    );
    const userIds: string[] = users.rows.map((r: { id: string }) => r.id);
    await client.query(
      `insert into data_records (config_id, user_id, data, created_at, updated_at)
       select $1::uuid,
              ($2::uuid[])[1 + (g % 50)],
              jsonb_build_object(
                'name', 'Person ' || g,
                'city', ($3::text[])[1 + (g % 10)],
                'age', 18 + (g % 60),
                'score', (g::bigint * 7919) % 1000,
                'email', 'p' || g || '@example.com',
                'active', (g % 3 = 0),
                'joined', to_char(timestamptz '2020-01-01' + (g % 2000) * interval '1 day', 'YYYY-MM-DD')
              ),
              now() - ((g % 525600) * interval '1 minute'),
              now() - ((g % 525600) * interval '1 minute')
       from generate_series(1, $4::int) g`,
      [configId, userIds, CITIES, count],
    );
    // A table in steady state: autovacuum has set the visibility map, so index-only scans need no heap.
    await client.query('vacuum analyze data_records');
    return { configId, userIds };
  } finally {
    await client.end();
  }
}
