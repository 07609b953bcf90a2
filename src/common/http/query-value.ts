/**
 * The last value of a query parameter given once or repeated (`?a=1&a=2` gives "2"); anything that
 * is not a string (a nested object from `a[b]=1`) is treated as absent.
 */
export function lastValue(value: unknown): string | undefined {
  const last: unknown = Array.isArray(value) ? value[value.length - 1] : value;
  return typeof last === 'string' ? last : undefined;
}
