import type { CarriedWrite } from '../../database/carried-write';

declare const handleBrand: unique symbol;

/**
 * The run's first write, offered to the step whose insert may carry it (StepContext.carriedWrite):
 * opaque to step code, which cannot read or run it. Only the built-in `save` step opens it
 * (`carriedWriteOf`, kept off the SDK index), to hand it to the records service.
 */
export interface RunWriteHandle {
  readonly [handleBrand]: 'RunWriteHandle';
}

const writes = new WeakMap<RunWriteHandle, CarriedWrite>();

/** Wraps the journal's offered write for a step context (engine side). */
export function runWriteHandle(write: CarriedWrite | null): RunWriteHandle | null {
  if (!write) return null;
  const handle = Object.freeze({}) as RunWriteHandle;
  writes.set(handle, write);
  return handle;
}

/** The write behind a handle (the `save` step only; lint keeps other steps from importing it). */
export function carriedWriteOf(handle: RunWriteHandle | null): CarriedWrite | null {
  return handle ? (writes.get(handle) ?? null) : null;
}
