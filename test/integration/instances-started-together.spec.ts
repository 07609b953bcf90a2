import { randomBytes } from 'node:crypto';
import { Client, Pool } from 'pg';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createApp } from '../../src/bootstrap';
import { loadConfig } from '../../src/config/app-config';
import { DatabaseClient } from '../../src/database/database-client';
import { withDatabase } from '../utils/snapshot';
import { TEST_ADMIN, testEnv } from '../utils/test-app';

const serverUrl = process.env.TEST_DATABASE_URL;
const onPostgres = serverUrl ? describe : describe.skip;

/** An empty database (nothing migrated) on the test server, dropped by `drop`. */
async function emptyDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `t_empty_${randomBytes(4).toString('hex')}`;
  const admin = new Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(
    `create database "${name}" encoding 'UTF8' lc_ctype 'C.UTF-8' lc_collate 'C.UTF-8' template template0`,
  );
  await admin.end();
  return {
    url: withDatabase(serverUrl!, name),
    drop: async () => {
      const drop = new Client({ connectionString: serverUrl });
      await drop.connect();
      await drop.query(`drop database if exists "${name}" with (force)`);
      await drop.end();
    },
  };
}

function poolClient(url: string): DatabaseClient {
  const pool = new Pool({ connectionString: url, max: 4 });
  pool.on('error', () => undefined);
  // Not owned: an application closing must not end the pool the test ends.
  return DatabaseClient.forPool(pool, false);
}

onPostgres('instances started together on an empty database (PostgreSQL)', () => {
  it('three migrations at once all succeed, and the schema is migrated once', async () => {
    const database = await emptyDatabase();
    const clients = [1, 2, 3].map(() => poolClient(database.url));
    try {
      const results = await Promise.allSettled(clients.map((client) => client.migrate()));
      expect(results.map((result) => result.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
      const applied = results.map((result) => (result as PromiseFulfilledResult<number>).value).sort();
      // One applied every migration, the two that waited found nothing left to do.
      expect(applied.slice(0, 2)).toEqual([0, 0]);
      expect(applied[2]).toBeGreaterThan(0);
    } finally {
      await Promise.all(clients.map((client) => client.pool!.end()));
      await database.drop();
    }
  }, 60_000);

  it('three applications booted at once all come up with one admin, who can log in on each', async () => {
    const database = await emptyDatabase();
    const clients = [1, 2, 3].map(() => poolClient(database.url));
    const apps: NestFastifyApplication[] = [];
    try {
      const boots = await Promise.allSettled(
        clients.map((client) =>
          createApp(loadConfig(testEnv({ WORKFLOW_WORKERS: '0' })), client).then((app) => {
            apps.push(app);
            return app;
          }),
        ),
      );
      expect(boots.map((boot) => boot.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
      for (const app of apps) {
        const login = await app.inject({ method: 'POST', url: '/api/auth/login', payload: TEST_ADMIN });
        expect(login.statusCode).toBe(200);
      }
      const check = new Client({ connectionString: database.url });
      await check.connect();
      const admins = await check.query(`select count(*)::int as n from users where role = 'admin'`);
      await check.end();
      expect(admins.rows[0].n).toBe(1);
    } finally {
      await Promise.all(apps.map((app) => app.close()));
      await Promise.all(clients.map((client) => client.pool!.end()));
      await database.drop();
    }
  }, 90_000);
});
