import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

/**
 * Reads `.env` from the working directory (or the file ENV_FILE names) into `process.env` with
 * Node's own parser, before the configuration is validated. A variable already set in the real
 * environment wins over the file. Returns the file read, or null when there is none.
 */
export function loadEnvFile(): string | null {
  const named = process.env.ENV_FILE?.trim();
  const path = resolve(named || '.env');
  if (!existsSync(path)) {
    if (named) throw new Error(`ENV_FILE names ${path}, which does not exist`);
    return null;
  }
  process.loadEnvFile(path);
  return path;
}
