import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acquireDataDirLock, DataDirLockedError } from './data-dir-lock';

describe('acquireDataDirLock', () => {
  const lockIn = () => join(mkdtempSync(join(tmpdir(), 'fdws-lockfile-')), 'pglite.lock');

  it('creates the lock with our pid, refuses a second take in this process, removes it on release', () => {
    const path = lockIn();
    const release = acquireDataDirLock(path);
    expect(readFileSync(path, 'utf8')).toBe(`${process.pid}\n`);
    expect(() => acquireDataDirLock(path)).toThrow(DataDirLockedError);
    release();
    expect(existsSync(path)).toBe(false);
    acquireDataDirLock(path)();
  });

  it('refuses a lock held by another live process', () => {
    const path = lockIn();
    writeFileSync(path, `${process.ppid}\n`);
    expect(() => acquireDataDirLock(path)).toThrow(`is in use by process ${process.ppid}`);
    expect(readFileSync(path, 'utf8')).toBe(`${process.ppid}\n`);
  });

  it('recovers a stale lock: a dead pid, garbage, or our own pid not taken by us (pid 1 after a container restart)', () => {
    for (const content of ['2147483646\n', 'not a pid', `${process.pid}\n`]) {
      const path = lockIn();
      writeFileSync(path, content);
      const release = acquireDataDirLock(path);
      expect(readFileSync(path, 'utf8')).toBe(`${process.pid}\n`);
      release();
    }
  });
});
