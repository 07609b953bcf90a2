// First: the memory policy applies before the modules below are loaded (see the file).
import { bootFinished, holdsEmbeddedDatabase } from './process-memory';
import 'reflect-metadata';
import pino from 'pino';
import { causeChain } from './common/errors/cause-chain';
import { logOptions } from './common/http/log-options';
import { ConfigValidationError, loadConfig, type AppConfig } from './config/app-config';
import { loadEnvFile } from './config/env-file';
import { startTracing } from './common/telemetry/tracing';
import { installLastLineOfDefence } from './common/lifecycle/last-line-of-defence';

/** Logs until the application's own logger exists, in the same JSON shape; boot failures end here. */
const bootLog = pino(logOptions(process.env.LOG_LEVEL?.trim() || 'info'));

/** What this process serves, for the start line; never a credential (hosts only). */
function servedSummary(config: AppConfig) {
  const hostOf = (url: string | null) => (url ? new URL(url).host : null);
  return {
    database: config.databaseUrl ? `PostgreSQL at ${hostOf(config.databaseUrl)}` : 'embedded PGlite',
    redis: config.redisUrl ? hostOf(config.redisUrl) : 'none (cache and limits in process)',
    mail: config.smtpUrl ? `SMTP at ${hostOf(config.smtpUrl)}` : `files in ${config.dataDir}/outbox`,
    workflowWorkers: config.workflowWorkers,
    registration: config.registrationEnabled ? 'open' : 'admins only',
    nodeEnv: config.nodeEnv,
  };
}

async function main(): Promise<void> {
  const envFile = loadEnvFile();
  const config = loadConfig(process.env);
  if (!config.databaseUrl) holdsEmbeddedDatabase();
  if (envFile) bootLog.info(`Read ${envFile} (variables set in the environment win)`);
  // Before the server's modules load: tracing patches them as they are required.
  if (startTracing()) bootLog.info('Tracing on: spans exported over OTLP/HTTP');
  const { createApp } = await import('./bootstrap');
  const app = await createApp(config);
  const fastify = app.getHttpAdapter().getInstance();
  const log = fastify.log;
  if (config.jwtSecretGenerated) {
    log.warn('JWT_SECRET is not set: using a random secret, so tokens stop working at every restart');
  }
  await app.listen({ port: config.port, host: config.host });
  installLastLineOfDefence(log);
  bootFinished();
  // The bound address (PORT=0 picks a free port).
  const address = (await app.getUrl()).replace('[::1]', 'localhost');
  log.info(
    { serves: servedSummary(config) },
    `Listening on ${address} (database: ${config.databaseUrl ? 'PostgreSQL' : 'embedded PGlite'}, API docs at /api-docs)`,
  );
}

main().catch((error: unknown) => {
  // One JSON line: the list of configuration problems, a locked data directory, or any other cause.
  if (error instanceof ConfigValidationError) bootLog.fatal({ problems: error.problems }, error.message);
  else bootLog.fatal({ err: error }, `Boot failed: ${causeChain(error)}`);
  process.exit(1);
});
