import { loadConfig } from '../config/app-config';
import { loadEnvFile } from '../config/env-file';
import { DatabaseClient } from '../database/database-client';

/**
 * `npm run migrate`: applies the pending migrations and exits, for deployments that migrate before
 * rolling out (then started with DATABASE_MIGRATE=false). Reads .env and the environment like the
 * server; safe to run while instances are up or starting (the advisory lock of applyMigrations).
 */
async function main(): Promise<void> {
  loadEnvFile();
  const config = loadConfig(process.env);
  const client = await DatabaseClient.open({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    pgliteFsync: config.pgliteFsync,
    pgliteOptimize: config.pgliteOptimize,
    poolSize: 1,
  });
  try {
    const applied = await client.migrate();
    console.log(applied === 0 ? 'The database is up to date' : `Applied ${applied} migration(s)`);
  } finally {
    await client.close();
  }
}

main().catch((error: unknown) => {
  console.error(`migrate: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
