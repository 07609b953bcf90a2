import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createApp } from '../../src/bootstrap';
import { loadConfig } from '../../src/config/app-config';
import { DatabaseClient } from '../../src/database/database-client';
import { testEnv } from '../utils/test-app';
import { embeddedOnly } from '../utils/configurations';
import { serviceScript } from '../utils/service-build';

const root = resolve(__dirname, '../..');

function runAdminCli(dataDir: string, args: string[]) {
  return spawnSync(process.execPath, [serviceScript('src/cli/admin.ts'), ...args], {
    cwd: root,
    env: { PATH: process.env.PATH, DATA_DIR: dataDir, LOG_LEVEL: 'warn', ADMIN_CLI_PASSWORD: '' },
    encoding: 'utf8',
    timeout: 90_000,
  });
}

embeddedOnly('npm run admin (src/cli/admin.ts)', () => {
  it('creates an admin without a server, then resets it; the server then logs in with the new password only', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'fdws-admin-cli-'));
    const created = runAdminCli(dataDir, ['--email', 'Ops@Example.com', '--password', 'first-password']);
    expect(created.stderr).toBe('');
    expect(created.status).toBe(0);
    expect(created.stdout).toMatch(
      /^The admin ops@example\.com \([0-9a-f-]{36}\) is active with the given password\n$/,
    );

    const reset = runAdminCli(dataDir, ['--email', 'ops@example.com', '--password', 'second-password']);
    expect(reset.status).toBe(0);
    expect(reset.stdout).toBe(created.stdout);

    const config = loadConfig({ ...testEnv({ DATA_DIR: dataDir }), REDIS_URL: '' });
    const app = await createApp(
      config,
      await DatabaseClient.open({ databaseUrl: null, dataDir, poolSize: 1 }),
    );
    try {
      const login = (password: string) =>
        app.inject({ method: 'POST', url: '/auth/login', payload: { email: 'ops@example.com', password } });
      expect((await login('first-password')).statusCode).toBe(401);
      const ok = await login('second-password');
      expect(ok.statusCode).toBe(200);
      expect(ok.json().user).toMatchObject({ email: 'ops@example.com', role: 'admin' });
      // The .env.example default admin was never seeded.
      const fallback = await app.inject({
        method: 'POST',
        url: '/auth/login',
        payload: { email: 'admin@example.com', password: 'admin12345' },
      });
      expect(fallback.statusCode).toBe(401);
    } finally {
      await app.close();
    }
  }, 180_000);

  it('refuses a missing password (usage, exit 2) and a short one (exit 1) without touching anything', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'fdws-admin-cli-'));
    const usage = runAdminCli(dataDir, ['--email', 'ops@example.com']);
    expect(usage.status).toBe(2);
    expect(usage.stdout).toContain('npm run admin -- --email');
    const short = runAdminCli(dataDir, ['--email', 'ops@example.com', '--password', 'short']);
    expect(short.status).toBe(1);
    expect(short.stderr).toBe('admin: the password needs 8 to 128 characters\n');
  }, 60_000);
});
