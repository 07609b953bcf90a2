import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Shared buffers of the embedded database. PostgreSQL's 128MB default grows PGlite's WebAssembly
 * memory to 188 MiB before any query, and WebAssembly memory never shrinks. 32MB is the smallest
 * measured size at which the embedded list on 100,000 records is as fast as with 128MB (16MB and 24MB
 * made it about 1.7x slower; bench/README "Embedded start memory").
 */
export const PGLITE_SHARED_BUFFERS = '32MB';

/** Whether `directory` already holds a cluster (PGlite checks the same file before running initdb). */
export function hasPgliteCluster(directory: string): boolean {
  return existsSync(join(directory, 'PG_VERSION'));
}

/**
 * Run by `node -e` (CommonJS, so it needs no file of its own in `dist/` or next to the ts sources).
 * Arguments: PGlite's module path, the directory, the start parameters and initdb's, as JSON.
 */
const CREATE_CLUSTER_SCRIPT = `
const [modulePath, directory, startParams, initDbStartParams] = process.argv.slice(1);
const { PGlite } = require(modulePath);
PGlite.create(directory, {
  startParams: JSON.parse(startParams),
  initDbStartParams: JSON.parse(initDbStartParams),
})
  .then((pglite) => pglite.close())
  .catch((error) => {
    process.stderr.write(String((error && error.stack) || error) + '\\n');
    process.exit(1);
  });
`;

/** How much of the child's stderr an error message carries. */
const STDERR_TAIL = 4000;

/**
 * Creates the cluster in a short-lived child process. PGlite runs initdb in a second instance whose
 * WebAssembly memory (about 470 MB with its copy of the heap) a server process would keep until a full
 * GC that an idle server never runs; a child returns it all when it exits. The caller holds the
 * data-directory lock, so no other process of ours opens the directory meanwhile; the caller syncs
 * what the child wrote to disk.
 */
export function createPgliteCluster(directory: string, startParams: readonly string[]): Promise<void> {
  const initDbStartParams = ['--set', `shared_buffers=${PGLITE_SHARED_BUFFERS}`];
  const child = spawn(
    process.execPath,
    [
      '-e',
      CREATE_CLUSTER_SCRIPT,
      require.resolve('@electric-sql/pglite'),
      directory,
      JSON.stringify(startParams),
      JSON.stringify(initDbStartParams),
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-STDERR_TAIL);
  });
  return new Promise((resolvePromise, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code === 0) return resolvePromise();
      reject(
        new Error(
          `PGlite could not create the embedded database in ${directory} (child exited with ${signal ?? code}): ${stderr.trim()}`,
        ),
      );
    });
  });
}
