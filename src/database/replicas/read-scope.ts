import { AsyncLocalStorage } from 'node:async_hooks';
import type { Pool } from 'pg';
import type { Database } from '../database.types';

/** A replica that reads of the current request go to (README "Read replicas"). */
export interface ReadTarget {
  /** The replica's name in logs and metrics (`replica1`, ...): never its URL. */
  readonly name: string;
  readonly db: Database;
  readonly pool: Pool;
}

/**
 * Which database the work in progress reads from. Nothing set (background work, every write, every
 * route not marked as a routed read) is the primary; a routed read runs its handler inside
 * `onReadTarget`, so every query it makes through the injected database goes to that replica.
 */
const scope = new AsyncLocalStorage<ReadTarget | null>();

export function currentReadTarget(): ReadTarget | null {
  return scope.getStore() ?? null;
}

export function onReadTarget<T>(target: ReadTarget | null, work: () => T): T {
  return scope.run(target, work);
}

/**
 * Runs `work` on the primary even inside a routed read: values kept for other requests (the shared
 * cache) must never be filled from a replica that may be behind the invalidation that emptied them.
 */
export function onPrimary<T>(work: () => T): T {
  return currentReadTarget() === null ? work() : scope.run(null, work);
}
