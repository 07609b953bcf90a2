/** The delay a `Retry-After` header asks for (delta-seconds or an HTTP date), in ms; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now: number = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  if (!/^[A-Za-z]{3}/.test(trimmed)) return undefined; // every HTTP-date form starts with the day name
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}
