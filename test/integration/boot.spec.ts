import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseClient } from '../../src/database/database-client';
import { createApp } from '../../src/bootstrap';
import { loadConfig } from '../../src/config/app-config';
import { testEnv } from '../utils/test-app';
import { embeddedOnly } from '../utils/configurations';
import { processStore, runServiceToExit, startServiceProcess } from '../utils/service-process';
import { untilTrue } from '../utils/until';

const until = (done: () => boolean, what: string) => untilTrue(done, what, { timeoutMs: 10_000 });

/** Only what a test names: none of the test defaults (admin, secret, limits) a started service gets. */
const ONLY = {
  NODE_ENV: undefined,
  LOG_LEVEL: undefined,
  JWT_SECRET: undefined,
  ADMIN_EMAIL: undefined,
  ADMIN_PASSWORD: undefined,
  THROTTLE_LIMIT: undefined,
  THROTTLE_AUTH_LIMIT: undefined,
  HOST: undefined,
};

embeddedOnly('boot', () => {
  it('stops the process with every configuration problem listed, as one JSON line', async () => {
    const result = await runServiceToExit({
      ...ONLY,
      NODE_ENV: 'production',
      PORT: 'x',
      CACHE_ENABLED: 'maybe',
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('');
    const lines = result.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]);
    expect(line).toMatchObject({ level: 60, msg: expect.stringContaining('Invalid configuration:') });
    expect(line.time).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(line.problems).toEqual(
      expect.arrayContaining([
        expect.stringContaining('PORT must be an integer'),
        'JWT_SECRET is required when NODE_ENV=production',
        expect.stringContaining('METRICS_TOKEN or METRICS_PORT is required when NODE_ENV=production'),
        expect.stringContaining('CACHE_ENABLED must be true or false'),
      ]),
    );
  }, 60_000);

  it('reads the env file (.env, or the one ENV_FILE names); a variable of the real environment wins', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'fdws-env-file-')), 'service.env');
    writeFileSync(file, 'PORT=not-a-port\nTHROTTLE_LIMIT=also-bad\nNODE_ENV=production\n');
    const result = await runServiceToExit({ ...ONLY, PORT: undefined, NODE_ENV: 'test', ENV_FILE: file });
    expect(result.code).toBe(1);
    const line = JSON.parse(result.stdout.trim().split('\n').pop()!);
    // From the file: PORT and THROTTLE_LIMIT; NODE_ENV=test from the environment wins (no JWT_SECRET problem).
    expect(line.problems).toEqual([
      'PORT must be an integer between 0 and 65535 (got "not-a-port")',
      'THROTTLE_LIMIT must be an integer between 1 and 10000000 (got "also-bad")',
    ]);
  }, 60_000);

  it('a database it cannot reach stops the boot with one JSON error line and nothing on stderr', async () => {
    const result = await runServiceToExit({
      ...ONLY,
      DATABASE_URL: 'postgres://postgres@127.0.0.1:1/nowhere',
      JWT_SECRET: 'boot-log-secret-0123456789abcdef',
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('');
    const lines = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { level: number; msg: string });
    const failures = lines.filter((line) => line.level >= 50);
    expect(failures).toEqual([
      expect.objectContaining({ level: 60, msg: expect.stringContaining('ECONNREFUSED 127.0.0.1:1') }),
    ]);
  }, 60_000);

  it('boots to "Listening" without an error line in its log', async () => {
    const service = await startServiceProcess({
      ...ONLY,
      DATA_DIR: mkdtempSync(join(tmpdir(), 'fdws-boot-log-')),
      JWT_SECRET: 'boot-log-secret-0123456789abcdef',
    });
    try {
      // pino levels: 50 error, 60 fatal; Nest's own console format says ERROR.
      const errorLines = service
        .output()
        .split('\n')
        .filter((line) => /"level":(50|60)\b|\bERROR\b/.test(line));
      expect(errorLines).toEqual([]);
    } finally {
      await service.stop();
    }
  }, 120_000);

  it('logs each request as one "request completed" line with its id, method, URL, client and status', async () => {
    // A data directory that already holds its cluster: the first start's is the test above.
    const service = await startServiceProcess((await processStore('fdws-request-log-')).env);
    try {
      const response = await fetch(`${service.url}/health?probe=1`, {
        headers: { 'x-request-id': 'log-line-1' },
      });
      expect(response.status).toBe(200);
      await until(() => service.stdout().includes('"reqId":"log-line-1"'), 'the request line');
      const line = service
        .stdout()
        .split('\n')
        .filter((text) => text.includes('"reqId":"log-line-1"'))
        .map((text) => JSON.parse(text) as Record<string, unknown>);
      expect(line).toEqual([
        expect.objectContaining({
          level: 30,
          msg: 'request completed',
          req: expect.objectContaining({
            method: 'GET',
            url: '/health?probe=1',
            remoteAddress: '127.0.0.1',
            remotePort: expect.any(Number),
          }),
          res: { statusCode: 200 },
          responseTime: expect.any(Number),
        }),
      ]);
    } finally {
      await service.stop();
    }
  }, 120_000);

  // Two boots on a new data directory (its initdb, the migrations): minutes on a loaded CI machine.
  it('keeps embedded PGlite data in DATA_DIR across a restart', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'fdws-restart-'));
    const config = loadConfig({ ...testEnv({ DATA_DIR: dataDir }), REDIS_URL: '' });
    const open = () => DatabaseClient.open({ databaseUrl: null, dataDir, poolSize: 1 });

    const first = await createApp(config, await open());
    const registered = await first.inject({
      method: 'POST',
      url: '/auth/register',
      payload: { email: 'persist@example.com', password: 'password-123', name: 'Persist' },
    });
    expect(registered.statusCode).toBe(201);
    await first.close();

    const secondClient = await open();
    const second = await createApp(config, secondClient);
    try {
      const login = await second.inject({
        method: 'POST',
        url: '/auth/login',
        payload: { email: 'persist@example.com', password: 'password-123' },
      });
      expect(login.statusCode).toBe(200);
      expect(login.json().user.email).toBe('persist@example.com');
    } finally {
      await second.close();
      await secondClient.close();
    }
  }, 180_000);
});
