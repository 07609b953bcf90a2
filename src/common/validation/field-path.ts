import { ValidateBy, type ValidationOptions } from 'class-validator';
const SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9_-]*$/;
/** Everything Object.prototype owns (`__proto__`, `constructor`, `toString`, ...) and `prototype`. */
const FORBIDDEN_SEGMENTS: ReadonlySet<string> = new Set([
  ...Object.getOwnPropertyNames(Object.prototype),
  'prototype',
]);

/** True for a name Object.prototype owns (`__proto__`, `constructor`, `toString`, ...) or `prototype`. */
export function isPrototypeName(name: string): boolean {
  return FORBIDDEN_SEGMENTS.has(name);
}

/**
 * The one whitelist of a path segment a user may name (filters, sorts, grid selectors, JSONLogic
 * paths, workflow templates and mappings): letters, digits, `_` and `-`, never a prototype property.
 */
export function isAllowedSegment(segment: string): boolean {
  return SEGMENT.test(segment) && !FORBIDDEN_SEGMENTS.has(segment);
}

/**
 * Splits a user-supplied field path (`address.city`) into whitelisted segments, or returns null.
 * Only paths that pass reach SQL, and then only as bound parameters or whitelisted literals: this is
 * the injection guard.
 */
export function parseFieldPath(
  path: string,
  limits: { maxSegments: number; maxLength: number } = { maxSegments: 5, maxLength: 200 },
): string[] | null {
  if (typeof path !== 'string' || path.length === 0 || path.length > limits.maxLength) return null;
  const segments = path.split('.');
  if (segments.length > limits.maxSegments) return null;
  return segments.every(isAllowedSegment) ? segments : null;
}

/** class-validator: the property is a field path `parseFieldPath` accepts. */
export function IsFieldPath(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isFieldPath',
      validator: {
        validate: (value: unknown) => typeof value === 'string' && parseFieldPath(value) !== null,
        defaultMessage: (args) => `${args?.property ?? 'value'} must be a field name or dotted path (a.b)`,
      },
    },
    options,
  );
}
