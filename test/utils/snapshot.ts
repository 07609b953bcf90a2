import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { MIGRATIONS_FOLDER } from '../../src/database/database-client';

export const CACHE_DIR = resolve(__dirname, '../../.jest-cache');

/** Changes whenever a migration changes, so a stale snapshot or template is never reused. */
export function migrationsHash(): string {
  const hash = createHash('sha256');
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
      a.name.localeCompare(b.name),
    )) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else hash.update(entry.name).update(readFileSync(path));
    }
  };
  walk(MIGRATIONS_FOLDER);
  return hash.digest('hex').slice(0, 16);
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
