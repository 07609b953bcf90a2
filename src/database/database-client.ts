import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import { sql } from 'drizzle-orm';
import { Pool, types } from 'pg';
import { acquireDataDirLock } from './data-dir-lock';
import * as schema from './schema';
import type { Database, DatabaseDriver } from './database.types';
import { rowsOf } from './raw-rows';

// int8 (count(*)) arrives as a string from node-postgres; counts here always fit a JS number.
types.setTypeParser(types.builtins.INT8, (value) => Number(value));

/** Found from the working directory, not __dirname, so `dist/` and ts sources share one folder. */
export const MIGRATIONS_FOLDER = resolve(process.cwd(), 'src/database/migrations');

/**
 * One open connection (pool or embedded instance) with its drizzle wrapper. Raw driver access stays
 * in this file and in repositories that need cursors.
 */
export class DatabaseClient {
  private constructor(
    readonly db: Database,
    readonly driver: DatabaseDriver,
    readonly pool: Pool | null,
    readonly pglite: PGlite | null,
    private readonly ownsConnection: boolean,
    private readonly releaseLock: () => void = () => undefined,
  ) {}

  static forPool(pool: Pool, ownsConnection = true): DatabaseClient {
    return new DatabaseClient(drizzlePg(pool, { schema }), 'postgres', pool, null, ownsConnection);
  }

  static forPglite(pglite: PGlite, ownsConnection = true, releaseLock?: () => void): DatabaseClient {
    return new DatabaseClient(
      drizzlePglite(pglite, { schema }),
      'pglite',
      null,
      pglite,
      ownsConnection,
      releaseLock,
    );
  }

  /**
   * PGlite under `dataDir/pglite` when no URL is given, otherwise a node-postgres pool. The embedded
   * database is locked (`dataDir/pglite.lock`, with the pid) for as long as it is open: a second
   * process on the same DATA_DIR fails with DataDirLockedError instead of corrupting it.
   */
  static async open(options: {
    databaseUrl: string | null;
    dataDir: string;
    poolSize: number;
  }): Promise<DatabaseClient> {
    if (options.databaseUrl) {
      const pool = new Pool({ connectionString: options.databaseUrl, max: options.poolSize });
      // An idle client losing its server must not crash the process; the next query reports it.
      pool.on('error', () => undefined);
      return DatabaseClient.forPool(pool);
    }
    const dataDir = resolve(options.dataDir);
    const directory = join(dataDir, 'pglite');
    mkdirSync(directory, { recursive: true });
    const release = acquireDataDirLock(join(dataDir, 'pglite.lock'));
    try {
      const pglite = await PGlite.create(directory);
      return DatabaseClient.forPglite(pglite, true, release);
    } catch (error) {
      release();
      throw error;
    }
  }

  async migrate(): Promise<void> {
    if (this.driver === 'pglite') {
      await migratePglite(this.db as any, { migrationsFolder: MIGRATIONS_FOLDER });
    } else {
      await migratePg(this.db as any, { migrationsFolder: MIGRATIONS_FOLDER });
    }
  }

  /**
   * Grid filters fold case with Unicode rules; a database whose collation only folds ASCII would
   * silently break them, so boot refuses it.
   */
  async assertUnicodeCaseFolding(): Promise<void> {
    const result = await this.db.execute(sql`select lower('ZÜRICH ÁRVÍZTŰRŐ') as folded`);
    const folded = String(rowsOf(result)[0]?.folded);
    if (folded !== 'zürich árvíztűrő') {
      throw new Error(
        `The database folds case only for ASCII (lower('ZÜRICH') gave "${folded}"); use a UTF-8 database (for example LC_CTYPE C.UTF-8).`,
      );
    }
  }

  async ping(): Promise<void> {
    await this.db.execute(sql`select 1`);
  }

  async close(): Promise<void> {
    if (!this.ownsConnection) return;
    if (this.pool) await this.pool.end();
    if (this.pglite && !this.pglite.closed) await this.pglite.close();
    this.releaseLock();
  }
}
