import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { Client } from 'pg';
import { DatabaseClient } from '../../src/database/database-client';
import { CACHE_DIR, snapshotPath, templateDatabaseName, withDatabase } from './snapshot';
import { buildServiceOnce, shareServiceBuild } from './service-build';

/**
 * Builds once per run what every test file clones: a migrated PGlite data dir and, for CI, a template
 * database; and the compiled service the suites' child processes run (service-build.ts).
 */
export default async function globalSetup(): Promise<void> {
  mkdirSync(CACHE_DIR, { recursive: true });
  shareServiceBuild(buildServiceOnce());
  const path = snapshotPath();
  if (!existsSync(path)) {
    const pglite = await PGlite.create();
    const client = await DatabaseClient.forPglite(pglite);
    await client.migrate();
    const dump = await pglite.dumpDataDir('gzip');
    // Written aside and renamed: another test run started at the same time (CI runs the PostgreSQL
    // configurations side by side) reads either no snapshot or a whole one, never half of it.
    const partial = `${path}.${process.pid}.partial`;
    writeFileSync(partial, Buffer.from(await dump.arrayBuffer()));
    renameSync(partial, path);
    await client.close();
  }

  const serverUrl = process.env.TEST_DATABASE_URL;
  if (serverUrl) {
    const template = templateDatabaseName(serverUrl);
    const admin = new Client({ connectionString: serverUrl });
    await admin.connect();
    try {
      const exists = await admin.query('select 1 from pg_database where datname = $1', [template]);
      if (exists.rowCount === 0) {
        await admin.query(
          `create database "${template}" encoding 'UTF8' lc_ctype 'C.UTF-8' lc_collate 'C.UTF-8' template template0`,
        );
        const client = await DatabaseClient.open({
          databaseUrl: withDatabase(serverUrl, template),
          dataDir: '',
          poolSize: 1,
        });
        await client.migrate();
        await client.close();
      }
    } finally {
      await admin.end();
    }
  }
}
