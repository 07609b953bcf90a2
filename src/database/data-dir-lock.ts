import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';

/** Another live process already serves the embedded database in this DATA_DIR. */
export class DataDirLockedError extends Error {
  constructor(
    readonly lockPath: string,
    readonly ownerPid: number,
  ) {
    super(
      `The embedded database in ${lockPath.replace(/[\\/]pglite\.lock$/, '')} is in use by process ${ownerPid}: ` +
        'two processes on one DATA_DIR would lose data. Stop that process, use another DATA_DIR, or set ' +
        `DATABASE_URL to share a PostgreSQL server. If process ${ownerPid} is not this service, delete ${lockPath}.`,
    );
    this.name = 'DataDirLockedError';
  }
}

/** Locks held by this process (a stale lock naming our own pid, e.g. pid 1 in a restarted container, is not one). */
const held = new Set<string>();

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function ownerOf(path: string): number | null {
  try {
    const pid = Number.parseInt(readFileSync(path, 'utf8').trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/**
 * Takes `path` (created exclusively, holding our pid) for the process's lifetime; a lock whose
 * process is gone is recovered. Returns the release function (also run at process exit).
 */
export function acquireDataDirLock(path: string): () => void {
  for (let attempt = 0; attempt < 5; attempt++) {
    let fd: number;
    try {
      fd = openSync(path, 'wx');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = ownerOf(path);
      if (owner !== null && owner !== process.pid && isAlive(owner))
        throw new DataDirLockedError(path, owner);
      if (owner !== null && owner === process.pid && held.has(path))
        throw new DataDirLockedError(path, owner);
      // Stale (the process died without releasing it) or half-written: remove and try again.
      try {
        unlinkSync(path);
      } catch (unlinkError) {
        if ((unlinkError as NodeJS.ErrnoException).code !== 'ENOENT') throw unlinkError;
      }
      continue;
    }
    try {
      writeSync(fd, `${process.pid}\n`);
    } finally {
      closeSync(fd);
    }
    held.add(path);
    const release = () => {
      if (!held.delete(path)) return;
      process.off('exit', release);
      try {
        if (ownerOf(path) === process.pid) unlinkSync(path);
      } catch {
        // Already gone.
      }
    };
    process.on('exit', release);
    return release;
  }
  throw new Error(`Could not take the lock ${path}`);
}
