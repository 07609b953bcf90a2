import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { MIGRATIONS_FOLDER } from '../../src/database/database-client';

export const CACHE_DIR = resolve(__dirname, '../../.jest-cache');

/** Every file under `dir` that `include` keeps (by name), in a stable order. */
export function filesUnder(dir: string, include: (name: string) => boolean = () => true): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return filesUnder(path, include);
      return include(entry.name) ? [path] : [];
    });
}

/**
 * A short hash of files' paths (relative to `base`) and contents, after `seed`: a cache key that
 * changes whenever one of them does.
 */
export function filesHash(paths: string[], base: string, seed = ''): string {
  const hash = createHash('sha256').update(seed);
  // Each name ends in a NUL, which no name holds: a name and a content never run into each other.
  for (const path of paths) hash.update(`${relative(base, path)}\0`).update(readFileSync(path));
  return hash.digest('hex').slice(0, 16);
}

/** Changes whenever a migration changes, so a stale snapshot or template is never reused. */
export function migrationsHash(): string {
  return filesHash(filesUnder(MIGRATIONS_FOLDER), MIGRATIONS_FOLDER);
}

export const snapshotPath = () => join(CACHE_DIR, `pglite-${migrationsHash()}.tar.gz`);

/** Name of the migrated template database on the PostgreSQL server named by TEST_DATABASE_URL. */
export const templateDatabaseName = (url: string) =>
  `${new URL(url).pathname.slice(1) || 'postgres'}_tpl_${migrationsHash()}`.toLowerCase();

export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}
