import { ROOT, startServer, type RunningServer } from './processes';

export const BENCH_ADMIN = { email: 'bench-admin@example.com', password: 'bench-admin-password' };

/**
 * The built service (`dist/main.js`) on the given database URL (or PGlite when null), with the
 * profile's settings on top of the defaults; only the rate limits are lifted.
 */
export function startService(
  databaseUrl: string | null,
  port: number,
  extraEnv: Record<string, string> = {},
) {
  return startServer(
    ['dist/main.js'],
    {
      JWT_SECRET: 'bench-secret-0123456789abcdef',
      ADMIN_EMAIL: BENCH_ADMIN.email,
      ADMIN_PASSWORD: BENCH_ADMIN.password,
      THROTTLE_LIMIT: '10000000',
      THROTTLE_AUTH_LIMIT: '10000000',
      ...(databaseUrl
        ? { DATABASE_URL: databaseUrl }
        : { DATABASE_URL: '', DATA_DIR: `${ROOT}/.bench-data/${Date.now()}` }),
      ...extraEnv,
    },
    port,
  );
}

/** The bare Fastify + pg baseline on the same database. */
export function startBaseline(databaseUrl: string, port: number): Promise<RunningServer> {
  return startServer(
    ['-r', '@swc-node/register', 'bench/baseline-server.ts'],
    { DATABASE_URL: databaseUrl, DATABASE_POOL_SIZE: '16' },
    port,
  );
}

export async function loginAdmin(server: RunningServer): Promise<string> {
  const response = await fetch(`${server.url}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(BENCH_ADMIN),
  });
  if (!response.ok) throw new Error(`login failed: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { token: string }).token;
}
