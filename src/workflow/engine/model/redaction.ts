export const REDACTED = '[redacted]';

/**
 * Env values shorter than this are not treated as secrets: nothing that short can be one, and
 * replacing every `eu` or `1` in an answer would mangle it (and show the value by its holes).
 */
export const MIN_SECRET_LENGTH = 4;

/** The allow-listed env values that count as secrets (every one long enough), wherever they are used. */
export function envSecrets(
  allowlist: Iterable<string>,
  values: Record<string, string | undefined> = process.env,
): Set<string> {
  const secrets = new Set<string>();
  for (const name of allowlist) {
    const value = values[name];
    if (value !== undefined && value.length >= MIN_SECRET_LENGTH) secrets.add(value);
  }
  return secrets;
}

/**
 * Replaces every occurrence of the secrets, as they are and in the encoded forms another system
 * may echo them in (see `secretForms`), in strings and keys anywhere inside a value, so they never
 * reach a response, a run record or a record's workflow log.
 */
export function redact<T>(value: T, secrets: ReadonlySet<string>): T {
  const pattern = patternOf(secrets);
  if (!pattern) return value;
  const walk = (item: unknown): unknown => {
    if (typeof item === 'string') return item.replace(pattern, REDACTED);
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

/** Whether a text holds one of the secrets in any of its forms. */
export function containsSecret(text: string, secrets: ReadonlySet<string>): boolean {
  const pattern = patternOf(secrets);
  if (!pattern) return false;
  pattern.lastIndex = 0;
  return pattern.test(text);
}

/**
 * A value redacted, then, when its text (JSON for anything but a string) is longer than
 * `maxChars`, that text cut there with `…`. Redacting first means a cut can never end inside a
 * secret and keep its prefix; a cut that would split a `[redacted]` marker goes before it.
 */
export function redactedExcerpt(data: unknown, secrets: ReadonlySet<string>, maxChars: number): unknown {
  const clean = redact(data, secrets);
  if (typeof clean === 'string') return cut(clean, maxChars);
  // A secret with `"` or `,` could be formed across two values once they are written as JSON.
  const json = redact(JSON.stringify(clean) ?? '', secrets);
  return json.length > maxChars ? cut(json, maxChars) : clean;
}

function cut(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  let end = maxChars;
  const marker = text.lastIndexOf(REDACTED, end - 1);
  if (marker !== -1 && marker + REDACTED.length > end) end = marker;
  // Never half a surrogate pair.
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}…`;
}

/**
 * The texts a secret can appear as: as is; JSON-escaped (also with `\/` and `\uXXXX` for
 * everything outside ASCII); percent-encoded (`encodeURIComponent`, and form encoding with `+`
 * for spaces; hex digits in either case, see `patternOf`); base64 and base64url, at each of the
 * three alignments it can have inside a longer encoded text (`Basic base64(user:secret)`), keeping
 * only the characters that depend on the secret's bytes alone.
 */
export function secretForms(secret: string): string[] {
  const json = JSON.stringify(secret).slice(1, -1);
  const ascii = json.replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  const forms = [
    secret,
    json,
    json.replace(/\//g, '\\/'),
    ascii,
    ascii.replace(/\\u[0-9a-f]{4}/g, (escape) => `\\u${escape.slice(2).toUpperCase()}`),
    encodeURIComponent(secret),
    new URLSearchParams({ s: secret }).toString().slice(2),
  ];
  const bytes = Buffer.from(secret, 'utf8');
  for (let offset = 0; offset < 3; offset++) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes])
      .toString('base64')
      .replace(/=+$/, '');
    const fragment = encoded.slice(
      Math.ceil((offset * 8) / 6),
      Math.floor(((offset + bytes.length) * 8) / 6),
    );
    forms.push(fragment, fragment.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return [...new Set(forms)].filter((form) => form.length >= MIN_SECRET_LENGTH);
}

/**
 * The patterns built last, by their secrets: a request asks about every secret (redaction, what a
 * redirect may carry) and about those barred from its origin (SecretOrigins), so a few are kept.
 */
const cached = new Map<string, RegExp | null>();
const MAX_CACHED_PATTERNS = 8;

/** One global pattern for every form of every secret, longest first. */
function patternOf(secrets: ReadonlySet<string>): RegExp | null {
  const list = [...secrets].filter((secret) => secret.length >= MIN_SECRET_LENGTH);
  const key = JSON.stringify(list);
  const kept = cached.get(key);
  if (kept !== undefined) return kept;
  const sources = list
    .flatMap(secretForms)
    .sort((a, b) => b.length - a.length)
    .map((form) =>
      escapeRegExp(form).replace(
        /%([0-9A-F])([0-9A-F])/g,
        (_, a: string, b: string) => `%${hexDigit(a)}${hexDigit(b)}`,
      ),
    );
  const pattern = sources.length > 0 ? new RegExp([...new Set(sources)].join('|'), 'g') : null;
  if (cached.size >= MAX_CACHED_PATTERNS) cached.delete(cached.keys().next().value!);
  cached.set(key, pattern);
  return pattern;
}

/** A percent-encoding's hex digit in either case. */
function hexDigit(digit: string): string {
  return /[A-F]/.test(digit) ? `[${digit}${digit.toLowerCase()}]` : digit;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
