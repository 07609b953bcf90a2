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

function runMigrateCli(dataDir: string) {
  return spawnSync(process.execPath, [serviceScript('src/cli/migrate.ts')], {
    cwd: root,
    env: { PATH: process.env.PATH, DATA_DIR: dataDir, ENV_FILE: '' },
    encoding: 'utf8',
    timeout: 90_000,
  });
}

/** Boots on the embedded database in `dataDir` with DATABASE_MIGRATE=false; the error message or null. */
async function bootWithoutMigrating(dataDir: string): Promise<string | null> {
  const config = loadConfig({ ...testEnv({ DATA_DIR: dataDir, DATABASE_MIGRATE: 'false' }), REDIS_URL: '' });
  const client = await DatabaseClient.open({ databaseUrl: null, dataDir, poolSize: 1 });
  try {
    const app = await createApp(config, client);
    await app.close();
    return null;
  } catch (error) {
    await client.close();
    return (error as Error).message;
  }
}

embeddedOnly('npm run migrate (src/cli/migrate.ts) and DATABASE_MIGRATE=false', () => {
  it('a boot that does not migrate refuses an unmigrated database; after npm run migrate it comes up', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'fdws-migrate-cli-'));
    expect(await bootWithoutMigrating(dataDir)).toMatch(
      /^The database lacks \d+ migration\(s\) and DATABASE_MIGRATE=false; run `npm run migrate`/,
    );

    const first = runMigrateCli(dataDir);
    expect(first.stderr).toBe('');
    expect(first.status).toBe(0);
    expect(first.stdout).toMatch(/^Applied \d+ migration\(s\)\n$/);
    const again = runMigrateCli(dataDir);
    expect(again.status).toBe(0);
    expect(again.stdout).toBe('The database is up to date\n');

    expect(await bootWithoutMigrating(dataDir)).toBeNull();
  }, 180_000);
});
