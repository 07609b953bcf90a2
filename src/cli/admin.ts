import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { NestFactory } from '@nestjs/core';
import { isEmail } from 'class-validator';
import pino from 'pino';
import { AppModule } from '../app.module';
import { logOptions } from '../common/http/log-options';
import { PinoNestLogger } from '../common/http/pino-nest-logger';
import { loadConfig } from '../config/app-config';
import { loadEnvFile } from '../config/env-file';
import { UsersService } from '../users/users.service';

const USAGE = `Creates an admin, or makes an existing account an active admin with a new password
(its earlier tokens stop working). Reads .env and the environment like the server; the server need
not run, the database must be reachable (migrations are applied first).

  npm run admin -- --email ops@example.com [--name "Ops"]   (password from ADMIN_CLI_PASSWORD, or --password)
  node dist/cli/admin.js --email ops@example.com --password 'long secret'   (in the image)`;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      email: { type: 'string' },
      name: { type: 'string' },
      password: { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  const password = values.password ?? process.env.ADMIN_CLI_PASSWORD;
  if (values.help || !values.email || !password) {
    console.log(USAGE);
    process.exit(values.help ? 0 : 2);
  }
  if (!isEmail(values.email.trim())) throw new Error(`"${values.email}" is not an e-mail address`);
  if (password.length < 8 || password.length > 128) throw new Error('the password needs 8 to 128 characters');
  loadEnvFile();
  const email = values.email.trim().toLowerCase();
  const name = values.name?.trim() || 'Administrator';
  // No HTTP server, no queued work taken, no metrics port: only the modules and the database. On an
  // empty database the first-admin seeder creates this account, never the .env.example default one.
  const config = {
    ...loadConfig(process.env),
    workflowWorkers: 0,
    metricsEnabled: false,
    adminEmail: email,
    adminName: name,
    adminPassword: password,
    adminDefaultsUsed: false,
  };
  const log = pino(logOptions(config.logLevel === 'info' ? 'warn' : config.logLevel));
  const app = await NestFactory.createApplicationContext(AppModule.forRoot({ config }), {
    logger: new PinoNestLogger(log),
    abortOnError: false,
  });
  try {
    const { user } = await app.get(UsersService).provisionAdminForOperator({ email, name, password });
    console.log(`The admin ${user.email} (${user.id}) is active with the given password`);
  } finally {
    await app.close();
  }
}

main().catch((error: unknown) => {
  console.error(`admin: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
