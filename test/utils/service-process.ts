import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pgliteDirectory } from '../../src/database/database-client';
import { TEST_ADMIN, TEST_JWT_SECRET } from './test-app';
import { freePort } from './free-port';
import { serviceScript } from './service-build';
import { createTestDatabase, seedPgliteDirectory } from './test-database';

const root = resolve(__dirname, '../..');

/** The real service (`src/main.ts`) in a child process: what a crash, a kill or a fault does to it. */
export interface ServiceProcess {
  child: ChildProcess;
  url: string;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** What it wrote to stdout alone, and to stderr alone. */
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code (or signal) once the process ends. */
  exited: Promise<number | string>;
  get alive(): boolean;
  /** Kills the process (SIGKILL) and waits for its end. */
  kill(): Promise<void>;
  /** Asks the process to stop (SIGTERM) and waits for its end. */
  stop(): Promise<void>;
}

/**
 * Starts the service on a free port of 127.0.0.1 with the test admin and secret, limits out of the
 * way, and `env` on top (a variable set to `undefined` is left out); returns at once, without waiting
 * for it to listen: a process may be meant to refuse to start.
 */
export async function spawnServiceProcess(env: Record<string, string | undefined>): Promise<ServiceProcess> {
  const port = await freePort();
  const variables: Record<string, string | undefined> = {
    PATH: process.env.PATH,
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    JWT_SECRET: TEST_JWT_SECRET,
    ADMIN_EMAIL: TEST_ADMIN.email,
    ADMIN_PASSWORD: TEST_ADMIN.password,
    THROTTLE_LIMIT: '1000000',
    THROTTLE_AUTH_LIMIT: '1000000',
    HOST: '127.0.0.1',
    PORT: String(port),
    ...env,
  };
  const child = spawn(process.execPath, [serviceScript('src/main.ts')], {
    cwd: root,
    env: Object.fromEntries(Object.entries(variables).filter(([, value]) => value !== undefined)),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    stderr += chunk.toString();
  });
  const exited = new Promise<number | string>((done) =>
    child.on('exit', (code, signal) => done(code ?? signal ?? 'unknown')),
  );
  const service: ServiceProcess = {
    child,
    url: `http://127.0.0.1:${port}`,
    output: () => output,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    get alive() {
      return child.exitCode === null && child.signalCode === null;
    },
    async kill() {
      if (service.alive) child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (service.alive) child.kill('SIGTERM');
      await exited;
    },
  };
  return service;
}

/** Resolves once the service logs that it listens; fails with its output if it exits first (or takes 90 s). */
export async function listening(service: ServiceProcess): Promise<void> {
  const deadline = Date.now() + 90_000;
  while (!service.output().includes('Listening on http://')) {
    if (!service.alive || Date.now() > deadline) {
      if (service.alive) service.child.kill('SIGKILL');
      throw new Error(`the service did not start:\n${service.output()}`);
    }
    await new Promise((done) => setTimeout(done, 100));
  }
}

/** Runs the service until it ends by itself (a refused start): its exit code and what it wrote. */
export async function runServiceToExit(
  env: Record<string, string | undefined>,
): Promise<{ code: number | string; stdout: string; stderr: string }> {
  const service = await spawnServiceProcess(env);
  const timeout = setTimeout(() => service.child.kill('SIGKILL'), 60_000);
  const code = await service.exited;
  clearTimeout(timeout);
  return { code, stdout: service.stdout(), stderr: service.stderr() };
}

/** {@link spawnServiceProcess}, then {@link listening}. */
export async function startServiceProcess(env: Record<string, string | undefined>): Promise<ServiceProcess> {
  const service = await spawnServiceProcess(env);
  await listening(service);
  return service;
}

/** Where a service process keeps its data, as the variables that say so. */
export interface ProcessStore {
  env: { DATA_DIR: string; DATABASE_URL: string | undefined; DATABASE_LISTEN_URL: string | undefined };
  /** Drops the database made for it (the process must have ended). */
  close(): Promise<void>;
}

/**
 * A new store for a service process in the run's configuration: a PGlite DATA_DIR of its own, or
 * with TEST_DATABASE_URL a fresh database on that server (through PgBouncer with TEST_PGBOUNCER_URL,
 * LISTEN then direct), so a suite of processes tests the server runs' database instead of repeating
 * the embedded run there. The DATA_DIR already holds the migrated cluster of the test snapshot, as
 * after a first start: a process on an empty one spends ~7 s creating it (initdb in a child), which
 * boot.spec tests, and suites about something else need not repeat.
 */
export async function processStore(prefix: string): Promise<ProcessStore> {
  const dataDir = mkdtempSync(join(tmpdir(), prefix));
  if (!process.env.TEST_DATABASE_URL) {
    await seedPgliteDirectory(pgliteDirectory(dataDir));
    return {
      env: { DATA_DIR: dataDir, DATABASE_URL: undefined, DATABASE_LISTEN_URL: undefined },
      close: async () => undefined,
    };
  }
  const database = await createTestDatabase();
  return {
    env: {
      DATA_DIR: dataDir,
      DATABASE_URL: database.url ?? undefined,
      // Set only where the pool goes through PgBouncer: LISTEN needs a session of its own.
      DATABASE_LISTEN_URL: process.env.TEST_PGBOUNCER_URL ? (database.directUrl ?? undefined) : undefined,
    },
    close: () => database.close(),
  };
}
