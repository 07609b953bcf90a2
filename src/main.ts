// First: the memory policy applies before the modules below are loaded (see the file).
import { bootFinished } from './process-memory';
import 'reflect-metadata';
import { createApp } from './bootstrap';
import { ConfigValidationError, loadConfig } from './config/app-config';
import { DataDirLockedError } from './database/data-dir-lock';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigValidationError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
  let app;
  try {
    app = await createApp(config);
  } catch (error) {
    if (error instanceof DataDirLockedError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
  const log = app.getHttpAdapter().getInstance().log;
  if (config.jwtSecretGenerated) {
    log.warn('JWT_SECRET is not set: using a random secret, so tokens stop working at every restart');
  }
  await app.listen({ port: config.port, host: config.host });
  bootFinished();
  log.info(
    `Listening on http://${config.host}:${config.port} (database: ${config.databaseUrl ? 'PostgreSQL' : 'embedded PGlite'}, API docs at /api-docs)`,
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
