/** Freezes a value handed out from the cache, so no caller can change what the next caller gets. */
export function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  for (const inner of Object.values(value as object)) deepFreeze(inner);
  return Object.freeze(value);
}
