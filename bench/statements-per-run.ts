// The SQL statements one run of the benchmark workflow sends (validate -> save -> transform -> api to a
// loopback receiver), listed in order, with those of one plain create for comparison. Boots the
// application in this process on a throw-away PostgreSQL database and counts every statement a pg
// client sends: `node -r @swc-node/register bench/statements-per-run.ts`.
import { Client, Pool } from 'pg';
import { createApp } from '../src/bootstrap';
import { loadConfig } from '../src/config/app-config';
import { DatabaseClient } from '../src/database/database-client';
import { createBenchDatabase } from './lib/bench-database';
import { BENCH_ADMIN } from './lib/servers';
import { BENCH_FORM, BENCH_SUBMISSION } from './suites/form-fixture';
import { benchWorkflowSteps, startReceiver } from './suites/workflow-fixture';

const RECEIVER_PORT = Number(process.env.BENCH_STATEMENTS_PORT ?? 3971);

const statements: string[] = [];
const originalQuery = Client.prototype.query;
Client.prototype.query = function countedQuery(this: Client, ...args: unknown[]) {
  const [query] = args as [string | { text?: string; name?: string }];
  const text = typeof query === 'string' ? query : (query?.text ?? `(prepared ${query?.name})`);
  statements.push(text.replace(/\s+/g, ' ').slice(0, 160));
  return (originalQuery as (...a: unknown[]) => unknown).apply(this, args);
} as typeof Client.prototype.query;

async function main(): Promise<void> {
  const database = await createBenchDatabase();
  const receiver = await startReceiver(RECEIVER_PORT);
  const pool = new Pool({ connectionString: database.url, max: 4 });
  const config = loadConfig({
    NODE_ENV: 'production',
    // Statements are counted, not metrics served (production asks for a metrics port or token).
    METRICS_ENABLED: 'false',
    LOG_LEVEL: 'silent',
    JWT_SECRET: 'bench-secret-0123456789abcdef',
    ADMIN_EMAIL: BENCH_ADMIN.email,
    ADMIN_PASSWORD: BENCH_ADMIN.password,
    WORKFLOW_API_ALLOWED_HOSTS: `127.0.0.1:${RECEIVER_PORT}`,
    WORKFLOW_WORKERS: '0',
    DATABASE_URL: database.url,
  });
  const app = await createApp(config, DatabaseClient.forPool(pool, false));
  try {
    const call = async (method: 'GET' | 'POST', url: string, body?: unknown, token?: string) => {
      const response = await app.inject({
        method,
        url,
        payload: body as object,
        headers: token ? { authorization: `Bearer ${token}` } : {},
      });
      if (response.statusCode >= 300) throw new Error(`${url}: ${response.statusCode} ${response.body}`);
      return response.json();
    };
    const { token } = await call('POST', '/auth/login', BENCH_ADMIN);
    const { id: configId } = await call('POST', '/api/configs', BENCH_FORM, token);
    const { id: workflowId } = await call(
      'POST',
      '/api/workflow',
      {
        name: 'bench intake',
        type: 'save',
        config: { steps: benchWorkflowSteps(configId, RECEIVER_PORT) },
      },
      token,
    );
    const measure = async (label: string, send: () => Promise<unknown>) => {
      await send(); // warm caches as a steady server has them
      statements.length = 0;
      await send();
      console.log(`${label}: ${statements.length} statements`);
      for (const text of statements) console.log(`  ${text}`);
    };
    await measure('create', () => call('POST', `/api/data/${configId}`, BENCH_SUBMISSION, token));
    await measure('workflow run', () =>
      call('POST', `/api/workflow/${workflowId}/execute`, { configId, data: BENCH_SUBMISSION }, token),
    );
  } finally {
    await app.close();
    await pool.end();
    await database.drop();
    receiver.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
