/**
 * The query string a grid-library store sends for `params`: each value as JSON (a string as it is),
 * every one URL-encoded.
 */
export function gridQuery(params: Record<string, unknown>): string {
  return Object.entries(params)
    .map(
      ([key, value]) =>
        `${key}=${encodeURIComponent(typeof value === 'string' ? value : JSON.stringify(value))}`,
    )
    .join('&');
}
