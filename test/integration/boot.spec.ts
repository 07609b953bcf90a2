import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DatabaseClient } from '../../src/database/database-client';
import { createApp } from '../../src/bootstrap';
import { loadConfig } from '../../src/config/app-config';
import { testEnv } from '../utils/test-app';
import { embeddedOnly } from '../utils/configurations';

const root = resolve(__dirname, '../..');

embeddedOnly('boot', () => {
  it('stops the process with every configuration problem listed, as one JSON line', () => {
    const result = spawnSync(process.execPath, ['-r', '@swc-node/register', 'src/main.ts'], {
      cwd: root,
      env: { PATH: process.env.PATH, NODE_ENV: 'production', PORT: 'x', CACHE_ENABLED: 'maybe' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(result.status).toBe(1);
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

  it('reads the env file (.env, or the one ENV_FILE names); a variable of the real environment wins', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'fdws-env-file-')), 'service.env');
    writeFileSync(file, 'PORT=not-a-port\nTHROTTLE_LIMIT=also-bad\nNODE_ENV=production\n');
    const result = spawnSync(process.execPath, ['-r', '@swc-node/register', 'src/main.ts'], {
      cwd: root,
      env: { PATH: process.env.PATH, NODE_ENV: 'test', ENV_FILE: file },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(result.status).toBe(1);
    const line = JSON.parse(result.stdout.trim().split('\n').pop()!);
    // From the file: PORT and THROTTLE_LIMIT; NODE_ENV=test from the environment wins (no JWT_SECRET problem).
    expect(line.problems).toEqual([
      'PORT must be an integer between 0 and 65535 (got "not-a-port")',
      'THROTTLE_LIMIT must be an integer between 1 and 10000000 (got "also-bad")',
    ]);
  }, 60_000);

  it('a database it cannot reach stops the boot with one JSON error line and nothing on stderr', () => {
    const result = spawnSync(process.execPath, ['-r', '@swc-node/register', 'src/main.ts'], {
      cwd: root,
      env: {
        PATH: process.env.PATH,
        PORT: '0',
        DATABASE_URL: 'postgres://postgres@127.0.0.1:1/nowhere',
        JWT_SECRET: 'boot-log-secret-0123456789abcdef',
      },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(result.status).toBe(1);
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
    const dataDir = mkdtempSync(join(tmpdir(), 'fdws-boot-log-'));
    const child = spawn(process.execPath, ['-r', '@swc-node/register', 'src/main.ts'], {
      cwd: root,
      env: {
        PATH: process.env.PATH,
        PORT: '0',
        DATA_DIR: dataDir,
        JWT_SECRET: 'boot-log-secret-0123456789abcdef',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    try {
      const deadline = Date.now() + 90_000;
      while (!output.includes('Listening on') && child.exitCode === null && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 200));
      expect(output).toContain('Listening on');
      // pino levels: 50 error, 60 fatal; Nest's own console format says ERROR.
      const errorLines = output.split('\n').filter((line) => /"level":(50|60)\b|\bERROR\b/.test(line));
      expect(errorLines).toEqual([]);
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    }
  }, 120_000);

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
  }, 60_000);
});
