import { originOf as webOriginOf, templateParts, type TemplatePart, StepError } from '../../sdk';
import { OutboundErrorCode } from '../../../common/outbound-http';

/**
 * URL templates of the `api` step. The origin (scheme, userinfo, host, port) may come only from
 * literal text or `{{env.NAME}}` (the operator's configuration): a value a caller can influence
 * (`input`, `savedData`, `results`, `user`, a partner's `result`) placed there could send the call,
 * with its credentials, anywhere. Everywhere else such a value is percent-encoded as one URL
 * component, so `../admin?all=1#` stays inside its path segment or query value.
 */

/** Characters that end the authority of a URL (WHATWG treats `\` as `/` for http and https). */
const AUTHORITY_END = new Set(['/', '?', '#', '\\']);

function readsEnv(path: string): boolean {
  return path.split('.')[0] === 'env';
}

/**
 * The placeholders of a URL template that stand in its origin: everything before the first `/`,
 * `?`, `#` or `\` of the literal text that is not the `//` of `scheme://`. A template with no such
 * character is all origin (`{{env.BASE}}{{input.path}}` is refused; write `{{env.BASE}}/{{input.path}}`).
 */
function originPlaceholders(parts: TemplatePart[]): string[] {
  const found: string[] = [];
  let authorityStarted = false;
  for (const part of parts) {
    if ('path' in part) {
      found.push(part.path);
      continue;
    }
    const { text } = part;
    for (let i = 0; i < text.length; i++) {
      if (!AUTHORITY_END.has(text[i])) continue;
      if (!authorityStarted && text.startsWith('//', i) && text[i - 1] === ':') {
        authorityStarted = true;
        i++;
        continue;
      }
      return found;
    }
  }
  return found;
}

/** Why a URL template may not be saved (a placeholder other than env in its origin), or null. */
export function urlOriginProblem(template: string): string | null {
  const refused = originPlaceholders(templateParts(template)).filter((path) => !readsEnv(path));
  if (refused.length === 0) return null;
  return `the origin (scheme, host, port) of a URL may come only from literal text or {{env.NAME}}, not from {{${refused[0].slice(0, 100)}}}`;
}

/**
 * The origin (`URL.origin`) of a URL template as far as literal text and env values fix it, for the
 * checks made when a definition is saved; null when it has none (a placeholder other than env in
 * its origin, a template that does not parse as a URL). Other placeholders can only
 * stand after the origin, so they are left out.
 */
export function fixedOriginOf(
  template: string,
  envValueOf: (name: string) => string | undefined,
): string | null {
  if (urlOriginProblem(template) !== null) return null;
  let fixed = '';
  for (const part of templateParts(template)) {
    if ('text' in part) fixed += part.text;
    // An env value not set renders as nothing, as it will when the request is sent.
    else if (readsEnv(part.path)) fixed += envValueOf(part.path.slice('env.'.length)) ?? '';
  }
  return webOriginOf(fixed);
}

/**
 * Renders a URL template: env values as they are, every other value percent-encoded
 * (`encodeURIComponent`). Then checks that the URL's origin is the one rendered from the literal
 * text and env values alone; a URL whose origin a value moved fails the step (`INVALID_URL`) before
 * anything is sent. (A definition saved before the rule above fails earlier, on the config check:
 * `INVALID_STEP_CONFIG`; this is the last line, for origins the static check cannot see.)
 */
export function renderUrl(template: string, valueOf: (path: string) => string): string {
  let url = '';
  let fixed = '';
  for (const part of templateParts(template)) {
    if ('text' in part) {
      url += part.text;
      fixed += part.text;
    } else if (readsEnv(part.path)) {
      const value = valueOf(part.path);
      url += value;
      fixed += value;
    } else {
      url += encodeComponent(valueOf(part.path));
    }
  }
  // A template that does not parse even without its values is refused as such when it is sent.
  // Nothing but literal text and env values (the common case): there is no value to move the origin.
  if (url !== fixed && originOf(url) !== originOf(fixed)) {
    throw new StepError('A value rendered into the URL changes or breaks its origin (scheme, host or port)', {
      code: OutboundErrorCode.INVALID_URL,
      details: { reason: 'origin' },
    });
  }
  return url;
}

function encodeComponent(value: string): string {
  // A lone surrogate (possible in a partner's JSON) cannot be percent-encoded: U+FFFD stands for it.
  return encodeURIComponent(
    value.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd'),
  );
}

function originOf(url: string): string | null {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.username}:${parsed.password}@${parsed.host}`;
  } catch {
    return null;
  }
}
