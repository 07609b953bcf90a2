/**
 * Names a path segment may never have: everything Object.prototype owns (`__proto__`,
 * `constructor`, `toString`, `__defineGetter__`, ...) and `prototype`. A rule or template reads own
 * data only.
 */
const FORBIDDEN_SEGMENTS: ReadonlySet<string> = new Set([
  ...Object.getOwnPropertyNames(Object.prototype),
  'prototype',
]);

/** Whether one segment of a data path is an own-data name (no prototype names, separators or escapes). */
export function isSafePathSegment(segment: string): boolean {
  return (
    segment.length > 0 &&
    segment.length <= 200 &&
    !FORBIDDEN_SEGMENTS.has(segment) &&
    !/[/\\]/.test(segment) &&
    // eslint-disable-next-line no-control-regex
    !/[\u0000-\u001f]/.test(segment)
  );
}

/**
 * Why a dotted data path (`address.city`, `items.0.qty`) is refused, or null. Relative (`../x`),
 * escaped (`a\.b`) and slashed paths are refused along with prototype names.
 */
export function dottedPathProblem(path: string): string | null {
  if (path === '') return null;
  if (path.includes('..') || path.includes('/') || path.includes('\\'))
    return `the path "${path.slice(0, 100)}" is not allowed`;
  if (!path.split('.').every(isSafePathSegment)) return `the path "${path.slice(0, 100)}" is not allowed`;
  return null;
}
