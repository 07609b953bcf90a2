import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import type { AppModuleOptions } from '../../src/app.module';
import { BLOB_CONTENT, type BlobContent } from '../../src/attachments/blob-content';
import { createApp } from '../../src/bootstrap';
import { AppCache } from '../../src/common/cache/app-cache.service';
import { loadConfig, type AppConfig } from '../../src/config/app-config';
import { SystemRolesSeeder } from '../../src/roles/system-roles.seeder';
import { FirstAdminSeeder } from '../../src/users/first-admin.seeder';
import { createTestDatabase, type TestDatabase } from './test-database';

export interface TestApp {
  app: NestFastifyApplication;
  config: AppConfig;
  database: TestDatabase;
  /** Sends a request through the real Fastify app (no socket); `token` adds the bearer header. */
  request(options: InjectOptions & { token?: string }): Promise<LightMyRequestResponse>;
  /** Empties every table and seeds roles and the admin again. */
  reset(): Promise<void>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  /** Environment overrides (names as in .env.example). */
  env?: Record<string, string>;
  /** Share a database with another app instance (restart and scale-out tests). */
  database?: TestDatabase;
  /** Extra modules, e.g. one registering a custom workflow step type. */
  modules?: AppModuleOptions['modules'];
}

export const TEST_JWT_SECRET = 'test-secret-for-jest-only-0123456789';
export const TEST_ADMIN = { email: 'admin@example.com', password: 'admin12345' };

/** Environment of a test app: generous rate limits, and Redis (own key prefix) when TEST_REDIS_URL is set. */
export function testEnv(overrides: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {
    NODE_ENV: 'test',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    JWT_SECRET: TEST_JWT_SECRET,
    THROTTLE_LIMIT: '1000000',
    THROTTLE_AUTH_LIMIT: '1000000',
    DATA_DIR: mkdtempSync(join(tmpdir(), 'fdws-test-')),
    REDIS_PREFIX: `test:${randomBytes(6).toString('hex')}:`,
    ADMIN_EMAIL: TEST_ADMIN.email,
    ADMIN_PASSWORD: TEST_ADMIN.password,
  };
  if (process.env.TEST_REDIS_URL) env.REDIS_URL = process.env.TEST_REDIS_URL;
  // Every reset seeds the admin and most tests log in: argon2id at its production cost spends about
  // 20 ms of CPU each time. A suite that boots as production keeps the production cost, which that
  // boot requires (the floor itself is tested in app-config.spec).
  if ((overrides.NODE_ENV ?? env.NODE_ENV) !== 'production') {
    env.PASSWORD_HASH_MEMORY_KIB = '1024';
    env.PASSWORD_HASH_ITERATIONS = '1';
  }
  return { ...env, ...overrides };
}

/** Boots the real application on a private real database (PGlite, or PostgreSQL with TEST_DATABASE_URL). */
export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const ownsDatabase = !options.database;
  const database = options.database ?? (await createTestDatabase());
  const config = loadConfig(testEnv({ ATTACHMENT_DIR: database.attachmentDir, ...options.env }));
  const app = await createApp(config, database.client, { modules: options.modules });
  return {
    app,
    config,
    database,
    request: ({ token, headers, ...rest }) =>
      app.inject({
        ...rest,
        headers: { ...(headers ?? {}), ...(token ? { authorization: `Bearer ${token}` } : {}) },
      }),
    reset: async () => {
      await database.truncate();
      // The rows of every blob are gone: its bytes in a filesystem store are orphans now.
      await app.get<BlobContent>(BLOB_CONTENT).removeOrphans(async () => new Set());
      // Emptied behind the service's back: what the process kept of the old rows must go.
      app.get(AppCache).forgetEverythingKept();
      await app.get(SystemRolesSeeder).run();
      await app.get(FirstAdminSeeder).run();
    },
    close: async () => {
      await app.close();
      if (ownsDatabase) await database.close();
    },
  };
}
