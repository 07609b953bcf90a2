import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import { Client } from 'pg';
import { DatabaseClient, pgliteStartParams } from '../../src/database/database-client';
import { createPostgresPool } from '../../src/database/postgres-pool';
import { snapshotPath, templateDatabaseName, withDatabase } from './snapshot';

const TABLES = [
  'data_import_rows',
  'data_imports',
  'attachments',
  'attachment_blob_chunks',
  'attachment_blobs',
  'webhook_attempts',
  'webhook_deliveries',
  'webhook_subscriptions',
  'domain_events',
  'workflow_effects',
  'workflow_operations',
  'workflow_runs',
  'workflow_versions',
  'workflows',
  'data_records',
  'record_history',
  'form_permissions',
  'form_config_versions',
  'form_configs',
  'revoked_tokens',
  'users',
  'roles',
  'sites',
];

export interface TestDatabase {
  client: DatabaseClient;
  /**
   * Connection URL when the database lives on a PostgreSQL server (TEST_DATABASE_URL); null for
   * PGlite. With TEST_PGBOUNCER_URL, the URL through the pooler (what the service's pool uses).
   */
  url: string | null;
  /** The database on the PostgreSQL server itself (the LISTEN session's URL); null for PGlite. */
  directUrl: string | null;
  /**
   * Where apps on this database keep attachment bytes when their store is the filesystem (PGlite's
   * default): shared like the database, as the instances of one deployment share theirs.
   */
  attachmentDir: string;
  /** Empties every table (seeded rows too); ~15 ms. */
  truncate(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A private, migrated database for one test file: an in-memory PGlite loaded from the snapshot, or,
 * when TEST_DATABASE_URL is set, a fresh database cloned from the migrated template on that server.
 * With TEST_PGBOUNCER_URL as well (a PgBouncer in transaction mode in front of that server, every
 * database passed through), the service's pool goes through the pooler, as in production behind
 * one, and LISTEN goes straight to the server (DATABASE_LISTEN_URL); creating and dropping
 * databases stays on the direct URL.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const serverUrl = process.env.TEST_DATABASE_URL;
  let client: DatabaseClient;
  let dispose: () => Promise<void>;
  let url: string | null = null;
  let directUrl: string | null = null;
  if (serverUrl) {
    const name = `t_${process.env.JEST_WORKER_ID ?? '0'}_${randomBytes(4).toString('hex')}`;
    const admin = new Client({ connectionString: serverUrl });
    await admin.connect();
    await admin.query(`create database "${name}" template "${templateDatabaseName(serverUrl)}"`);
    await admin.end();
    directUrl = withDatabase(serverUrl, name);
    const poolerUrl = process.env.TEST_PGBOUNCER_URL;
    url = poolerUrl ? withDatabase(poolerUrl, name) : directUrl;
    // The service's default: named statements on direct connections, unnamed through the pooler.
    const pool = createPostgresPool({ url, max: 10, preparedStatements: 'auto' });
    client = DatabaseClient.forPool(pool, false, poolerUrl ? directUrl : null);
    dispose = async () => {
      await pool.end();
      const drop = new Client({ connectionString: serverUrl });
      await drop.connect();
      await drop.query(`drop database if exists "${name}" with (force)`);
      await drop.end();
    };
  } else {
    const pglite = await fromSnapshot();
    client = await DatabaseClient.forPglite(pglite, false);
    dispose = async () => {
      if (!pglite.closed) await pglite.close();
    };
  }
  return {
    client,
    url,
    directUrl,
    attachmentDir: mkdtempSync(join(tmpdir(), 'fdws-attachments-')),
    truncate: async () => {
      // The app under test keeps working in the background (queued runs, the event dispatcher,
      // imports, cleanups): a statement of theirs can hold one of these tables while the truncate
      // holds another, and PostgreSQL ends one of the two as a deadlock. Emptying is then tried again.
      for (let attempt = 1; ; attempt++) {
        try {
          await client.db.execute(sql.raw(`truncate ${TABLES.join(', ')} restart identity cascade`));
          return;
        } catch (error) {
          if (attempt >= 5 || !isDeadlock(error)) throw error;
        }
      }
    },
    close: dispose,
  };
}

/**
 * A PGlite loaded from the migrated snapshot, in memory or in `directory`, with the service's own
 * start parameters (its smaller shared buffers; fsync is moot here): PGlite's default 128 MB pool
 * is zeroed at every start, ~0.5 s of CPU per test file.
 */
function fromSnapshot(directory?: string): Promise<PGlite> {
  const options = {
    loadDataDir: new Blob([readFileSync(snapshotPath())]),
    startParams: pgliteStartParams(PGlite.defaultStartParams, false),
  };
  return directory === undefined ? PGlite.create(options) : PGlite.create(directory, options);
}

/** Writes the migrated snapshot's cluster into `directory` (a service's `DATA_DIR/pglite`), closed cleanly. */
export async function seedPgliteDirectory(directory: string): Promise<void> {
  await (await fromSnapshot(directory)).close();
}

/** PostgreSQL's `deadlock_detected` (40P01), on the error or on the cause drizzle wraps it in. */
function isDeadlock(error: unknown): boolean {
  const codeOf = (value: unknown) => (value as { code?: unknown } | null)?.code;
  return codeOf(error) === '40P01' || codeOf((error as { cause?: unknown } | null)?.cause) === '40P01';
}
