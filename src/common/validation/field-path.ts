const SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9_-]*$/;
const FORBIDDEN = new Set(['__proto__', 'prototype', 'constructor']);
export const MAX_PATH_DEPTH = 5;

/**
 * Splits a user-supplied field path (`address.city`) into whitelisted segments, or returns null.
 * Only paths that pass reach SQL, and then only as bound parameters: this is the injection guard.
 */
export function parseFieldPath(path: string): string[] | null {
  if (typeof path !== 'string' || path.length === 0 || path.length > 200) return null;
  const segments = path.split('.');
  if (segments.length > MAX_PATH_DEPTH) return null;
  return segments.every((s) => SEGMENT.test(s) && !FORBIDDEN.has(s)) ? segments : null;
}
