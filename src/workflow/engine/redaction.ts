export const REDACTED = '[redacted]';

/**
 * Replaces every occurrence of the secrets (env values rendered during a run) in strings anywhere
 * inside a value, so they never reach a response, a run record or a record's workflow log.
 */
export function redact<T>(value: T, secrets: ReadonlySet<string>): T {
  const list = [...secrets].filter((secret) => secret.length > 0).sort((a, b) => b.length - a.length);
  if (list.length === 0) return value;
  const walk = (item: unknown): unknown => {
    if (typeof item === 'string')
      return list.reduce((text, secret) => text.split(secret).join(REDACTED), item);
    if (Array.isArray(item)) return item.map(walk);
    if (item && typeof item === 'object') {
      const out: Record<string, unknown> = {};
      for (const [key, inner] of Object.entries(item)) out[walk(key) as string] = walk(inner);
      return out;
    }
    return item;
  };
  return walk(value) as T;
}
