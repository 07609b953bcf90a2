import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { sql } from 'drizzle-orm';
import { type Pool, types } from 'pg';
import { acquireDataDirLock } from './data-dir-lock';
import { createPgliteCluster, hasPgliteCluster, PGLITE_SHARED_BUFFERS } from './pglite-cluster';
import { chooseWasmCompiler } from './pglite-compiler';
import { applyMigrations, pendingMigrations } from './migrator';
import { createPostgresPool } from './postgres-pool';
import type { PreparedStatementsMode } from '../config/app-config.model';
import * as schema from './schema';
import type { Database, DatabaseDriver } from './database.types';
import { rowsOf } from './raw-rows';
import { SnapshotReader } from './snapshot-reader';
import { currentReadTarget } from './replicas/read-scope';

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
    /** PostgreSQL: where the LISTEN session connects (DATABASE_LISTEN_URL); null = the pool's server. */
    readonly listenUrl: string | null = null,
  ) {}

  static forPool(pool: Pool, ownsConnection = true, listenUrl: string | null = null): DatabaseClient {
    return new DatabaseClient(
      drizzlePg(pool, { schema }),
      'postgres',
      pool,
      null,
      ownsConnection,
      undefined,
      listenUrl,
    );
  }

  /**
   * The embedded driver and PGlite itself are loaded here, not at the top of the file, so a process on
   * PostgreSQL never loads them (a few MB of resident memory).
   */
  static async forPglite(
    pglite: PGlite,
    ownsConnection = true,
    releaseLock?: () => void,
  ): Promise<DatabaseClient> {
    const { drizzle: drizzlePglite } = await import('drizzle-orm/pglite');
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
    /** PGlite: make every commit durable on disk before it is acknowledged (default true). */
    pgliteFsync?: boolean;
    /** PGlite: let V8 optimise the embedded database's hot code (faster, more memory; see chooseWasmCompiler). */
    pgliteOptimize?: boolean;
    /** PostgreSQL: a direct URL for LISTEN, when DATABASE_URL goes through a transaction pooler. */
    listenUrl?: string | null;
    /** PostgreSQL: keep drizzle's named prepared statements (not behind a transaction pooler). */
    preparedStatements?: PreparedStatementsMode;
  }): Promise<DatabaseClient> {
    if (options.databaseUrl) {
      const pool = createPostgresPool({
        url: options.databaseUrl,
        max: options.poolSize,
        preparedStatements: options.preparedStatements,
      });
      return DatabaseClient.forPool(pool, true, options.listenUrl ?? null);
    }
    const dataDir = resolve(options.dataDir);
    const directory = pgliteDirectory(dataDir);
    mkdirSync(directory, { recursive: true });
    const release = acquireDataDirLock(join(dataDir, 'pglite.lock'));
    try {
      const fsync = options.pgliteFsync ?? true;
      chooseWasmCompiler(options.pgliteOptimize ?? false);
      const { PGlite } = await import('@electric-sql/pglite');
      const startParams = pgliteStartParams(PGlite.defaultStartParams, fsync);
      // A new directory gets its cluster from a child process (see createPgliteCluster), under our lock.
      if (!hasPgliteCluster(directory)) await createPgliteCluster(directory, startParams);
      const pglite = await PGlite.create(directory, {
        startParams,
        // Queries resolve only after PGlite has synced its filesystem (its default; explicit here).
        relaxedDurability: false,
      });
      if (fsync) {
        try {
          enableDiskFsync(pglite);
          // Whatever was written while PGlite started (initdb in the child, crash recovery) reaches the disk too.
          fsyncTree(directory);
        } catch (error) {
          await pglite.close();
          throw error;
        }
      }
      return await DatabaseClient.forPglite(pglite, true, release);
    } catch (error) {
      release();
      throw error;
    }
  }

  /**
   * PostgreSQL only: reads of one snapshot on one pooled connection, with COPY (see SnapshotReader).
   * PGlite has a single connection and cannot stream COPY output, so callers check `driver` first.
   * Inside a routed read, on the replica chosen for it.
   */
  openSnapshotReader(): Promise<SnapshotReader> {
    if (!this.pool) throw new Error('A snapshot reader needs PostgreSQL (DATABASE_URL)');
    return SnapshotReader.open(currentReadTarget()?.pool ?? this.pool);
  }

  /** Applies the pending migrations under an advisory lock (see applyMigrations); returns how many. */
  migrate(): Promise<number> {
    return applyMigrations(this.db, MIGRATIONS_FOLDER);
  }

  /**
   * For a boot that does not migrate (DATABASE_MIGRATE=false): refuses a database that lacks
   * migrations, instead of failing later on a missing table or column.
   */
  async assertMigrated(): Promise<void> {
    const pending = await pendingMigrations(this.db, MIGRATIONS_FOLDER);
    if (pending > 0) {
      throw new Error(
        `The database lacks ${pending} migration(s) and DATABASE_MIGRATE=false; run \`npm run migrate\` (node dist/cli/migrate.js) first`,
      );
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

  /**
   * Runs after the HTTP server has drained (shutdown hooks): PGlite checkpoints, so the next start
   * replays no WAL, and closes; then the data-directory lock is released.
   */
  async close(): Promise<void> {
    if (!this.ownsConnection) return;
    if (this.pool) await this.pool.end();
    if (this.pglite && !this.pglite.closed) {
      await this.pglite.exec('CHECKPOINT');
      await this.pglite.close();
    }
    this.releaseLock();
  }
}

/** Where a DATA_DIR keeps its embedded cluster (beside its lock file). */
export function pgliteDirectory(dataDir: string): string {
  return join(dataDir, 'pglite');
}

/**
 * PostgreSQL options of the embedded database. PGlite's defaults include `-F` (fsync off): a commit
 * is then acknowledged once written to the OS, which survives a killed process but not a power cut
 * or kernel crash. With `fsync`, PostgreSQL syncs WAL at every commit and data files at checkpoints;
 * `wal_sync_method=fsync` because PGlite's fdatasync() does nothing. The smaller shared buffers apply
 * to directories created before they were chosen too (a start parameter overrides postgresql.conf).
 */
export function pgliteStartParams(defaults: readonly string[], fsync: boolean): string[] {
  const buffers = ['-c', `shared_buffers=${PGLITE_SHARED_BUFFERS}`];
  if (!fsync) return [...defaults, ...buffers];
  return [
    ...defaults.filter((param) => param !== '-F'),
    '-c',
    'fsync=on',
    '-c',
    'wal_sync_method=fsync',
    ...buffers,
  ];
}

interface EmscriptenStream {
  nfd?: number;
  stream_ops: { fsync?: (stream: EmscriptenStream) => number };
}

/** WASI errno EIO: PostgreSQL treats a failed WAL fsync as fatal, as it must. */
const WASI_EIO = 29;

/**
 * PGlite's Node filesystem (Emscripten NODEFS) has no fsync operation, so PostgreSQL's fsync()
 * silently returns without syncing. This gives NODEFS one that syncs the real file descriptor. The
 * operations object is shared by every file of the mount, open or not; it is found through an open
 * file of the data directory (PGlite 0.5 exposes the Emscripten module as `Module`).
 */
function enableDiskFsync(pglite: PGlite): void {
  const streams = (pglite.Module.FS as unknown as { streams: (EmscriptenStream | null)[] }).streams;
  const nodeStream = streams.find((stream) => typeof stream?.nfd === 'number');
  if (!nodeStream) {
    throw new Error(
      'PGlite: no open file of the data directory was found to enable fsync (unsupported PGlite version?); set PGLITE_FSYNC=false to start without it',
    );
  }
  nodeStream.stream_ops.fsync = (stream) => {
    try {
      if (typeof stream.nfd === 'number') fsyncSync(stream.nfd);
      return 0;
    } catch {
      return WASI_EIO;
    }
  };
}

/** fsync of every file and directory under `directory` (once, at start-up). */
function fsyncTree(directory: string): void {
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) fsyncTree(path);
    else if (entry.isFile()) fsyncPath(path);
  }
  fsyncPath(directory);
}

function fsyncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
