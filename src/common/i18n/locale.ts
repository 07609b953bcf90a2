import { SUPPORTED_LOCALES } from '../../config/app-config';
import { lastValue } from '../http/query-value';

export type Locale = (typeof SUPPORTED_LOCALES)[number];

interface LocaleSource {
  query?: unknown;
  headers: Record<string, string | string[] | undefined>;
}

function asLocale(value: unknown): Locale | undefined {
  if (typeof value !== 'string') return undefined;
  const base = value.trim().toLowerCase().split(/[-_]/)[0];
  return (SUPPORTED_LOCALES as readonly string[]).includes(base) ? (base as Locale) : undefined;
}

/**
 * `?lang=`, then `?locale=`, then the best supported `Accept-Language` entry, then the default. The
 * one place a locale is resolved: bootstrap's onRequest hook stores the answer on the request.
 */
export function resolveLocale(request: LocaleSource, fallback: Locale): Locale {
  const query = (request.query ?? {}) as Record<string, unknown>;
  const fromQuery = asLocale(lastValue(query.lang)) ?? asLocale(lastValue(query.locale));
  if (fromQuery) return fromQuery;
  const header = request.headers['accept-language'];
  const text = Array.isArray(header) ? header.join(',') : header;
  if (text) {
    const ranked = text
      .split(',')
      .map((part) => {
        const [tag, ...rest] = part.trim().split(';');
        const q = rest.find((p) => p.trim().startsWith('q='));
        return { tag, q: q ? Number(q.trim().slice(2)) : 1 };
      })
      .filter((entry) => Number.isFinite(entry.q) && entry.q > 0)
      .sort((a, b) => b.q - a.q);
    for (const entry of ranked) {
      const locale = asLocale(entry.tag);
      if (locale) return locale;
    }
  }
  return fallback;
}
