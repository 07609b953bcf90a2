export type Scalar = string | number | boolean | null;

/** A JSON value that is not an object or array: what filter values may be. */
export function isScalar(value: unknown): value is Scalar {
  return (
    value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
  );
}
