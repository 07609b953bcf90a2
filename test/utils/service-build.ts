import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { transformFileSync } from '@swc/core';
import { CACHE_DIR, filesHash, filesUnder } from './snapshot';

const root = resolve(__dirname, '../..');
const SOURCES = join(root, 'src');
const BUILD_PREFIX = 'service-';

/** The service's TypeScript files a process runs (tests left out), in a stable order. */
const serviceSources = () =>
  filesUnder(SOURCES, (name) => name.endsWith('.ts') && !name.endsWith('.spec.ts'));

/**
 * The service compiled once per test run for the processes the suites start (a crash, a kill, a
 * refused start, the command-line tools): each such process then loads JavaScript, as `dist/` does,
 * instead of compiling every file at start through `@swc-node/register` (about a second of CPU per
 * start, dozens of starts per run). The same swc settings as Jest's (`.swcrc`); the tree keeps the
 * layout of `src/`, and the service finds its migrations and translations from the working
 * directory, which stays the project's. Written aside and renamed, like the database snapshot, so
 * runs started together never see half of it; earlier builds are removed.
 */
export function buildServiceOnce(): string {
  const sources = serviceSources();
  // The compiler's settings are part of the key: other settings make another build.
  const name = `${BUILD_PREFIX}${filesHash(sources, root, readFileSync(join(root, '.swcrc'), 'utf8'))}`;
  const target = join(CACHE_DIR, name);
  if (existsSync(target)) return target;
  const partial = `${target}.${process.pid}.partial`;
  for (const path of sources) {
    const output = join(partial, relative(root, path)).replace(/\.ts$/, '.js');
    mkdirSync(dirname(output), { recursive: true });
    writeFileSync(output, transformFileSync(path, { swcrc: true, sourceMaps: false }).code);
  }
  try {
    renameSync(partial, target);
  } catch (error) {
    // Another run renamed the same build first: theirs is as good as ours.
    rmSync(partial, { recursive: true, force: true });
    if (!existsSync(target)) throw error;
  }
  for (const entry of readdirSync(CACHE_DIR)) {
    if (entry.startsWith(BUILD_PREFIX) && entry !== name && !entry.endsWith('.partial')) {
      rmSync(join(CACHE_DIR, entry), { recursive: true, force: true });
    }
  }
  return target;
}

/** Set by the global setup for the test files it runs before. */
const BUILD_DIR_VARIABLE = 'TEST_SERVICE_BUILD_DIR';

export function shareServiceBuild(directory: string): void {
  process.env[BUILD_DIR_VARIABLE] = directory;
}

/**
 * The compiled file of an entry point of `src/` (`src/main.ts`, `src/cli/admin.ts`) for `node` to run:
 * from the global setup's build, or from one made now when a file runs without it.
 */
export function serviceScript(entry: string): string {
  const build = process.env[BUILD_DIR_VARIABLE] ?? buildServiceOnce();
  return join(build, entry.replace(/\.ts$/, '.js'));
}
