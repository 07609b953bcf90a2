import type { FastifyInstance } from 'fastify';
import { AppError, type FieldError } from '../errors/app-error';

/**
 * Text that may hold a number a double cannot keep: a number with an exponent (`1e400`, `-5e-324`:
 * not preceded by a letter, digit, dot or dash, so the `3e4` inside a UUID is not one) or a run of
 * 16 or more digits and dots (`123456789012345678`, `0.30000000000000001`). A decimal of at most 15
 * significant digits always survives the round trip through a double, so any other body skips the
 * scan. In valid JSON a number follows the start, a space, `[`, `:` or `,`.
 */
const MAY_BE_INEXACT = /(?<![\w.-])-?\d[\d.]*[eE][-+]?\d|[\d.]{16}/;
const NUMBER_TOKEN = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?/y;

/** The significant digits of a decimal's mantissa: no sign, point, leading or trailing zeros. */
function significantDigits(decimal: string): string {
  const mantissa = decimal.split(/[eE]/)[0].replace(/[-.]/g, '');
  return mantissa.replace(/^0+/, '').replace(/0+$/, '');
}

/**
 * True when the JSON number token does not come back as it was written: it overflows (`1e400`), or
 * its significant digits change (`123456789012345678901234567890` loses its last digits,
 * `9007199254740993` becomes ...992, `0.30000000000000001` 0.3, `1e-400` 0). A large number that a
 * double holds exactly as written (`123456789012345680000`, what JSON.stringify writes) is kept.
 */
export function isInexactNumber(token: string): boolean {
  const value = Number(token);
  if (!Number.isFinite(value)) return true;
  return significantDigits(token) !== significantDigits(String(Math.abs(value)).replace(/e.*$/, ''));
}

interface Level {
  array: boolean;
  key: string;
  index: number;
}

/**
 * The path (`items.2.price`) of the first number in valid JSON text that a double cannot hold as
 * written, '' for a bare number, or null when every number is exact. Scans the text once, only
 * when MAY_BE_INEXACT matches.
 */
export function inexactNumberPath(text: string): string | null {
  if (!MAY_BE_INEXACT.test(text)) return null;
  const levels: Level[] = [];
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      let next = end + 1;
      while (next < text.length && /\s/.test(text[next])) next++;
      const top = levels[levels.length - 1];
      if (text[next] === ':' && top && !top.array) top.key = JSON.parse(text.slice(i, end + 1)) as string;
      i = end;
    } else if (char === '{' || char === '[') {
      levels.push({ array: char === '[', key: '', index: 0 });
    } else if (char === '}' || char === ']') {
      levels.pop();
    } else if (char === ',') {
      const top = levels[levels.length - 1];
      if (top?.array) top.index++;
    } else if (char === '-' || (char >= '0' && char <= '9')) {
      NUMBER_TOKEN.lastIndex = i;
      const token = NUMBER_TOKEN.exec(text)![0];
      if (isInexactNumber(token))
        return levels.map((level) => (level.array ? String(level.index) : level.key)).join('.');
      i += token.length - 1;
    }
  }
  return null;
}

export function inexactNumber(field: string): FieldError {
  return {
    field: field || '(body)',
    rule: 'exactNumber',
    message:
      'is a number a double cannot hold as written (too many digits or too large); send it as a string',
  };
}

/** Throws the 422 of `inexactNumber` when JSON text holds a number that would be stored changed. */
export function assertExactNumbers(text: string): void {
  const path = inexactNumberPath(text);
  if (path !== null) throw new AppError('VALIDATION_FAILED', { validationErrors: [inexactNumber(path)] });
}

/** JSON text is UTF-8 (RFC 8259); a byte sequence that is not is refused, never replaced. */
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/**
 * Wraps the JSON body parser Nest registered (Fastify's, with prototype-poisoning checks): after it
 * parsed a body, the text is checked for numbers JavaScript would silently round (`1e400` is
 * Infinity, a 30-digit integer loses its last digits), which are refused rather than stored changed;
 * and a body that is not UTF-8 is a 400 `INVALID_JSON` instead of text with U+FFFD in place of its bytes.
 * Call after `app.init()` (when Nest has registered its parser) and before the server is ready.
 */
export function registerExactJsonNumbers(fastify: FastifyInstance, bodyLimit: number): void {
  const parse = fastify.getDefaultJsonParser('error', 'error');
  fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser(
    'application/json',
    { parseAs: 'buffer', bodyLimit },
    (request, body, done) => {
      // Decoded here, strictly: a string parser would store bytes that are not UTF-8 as U+FFFD.
      let text: string;
      try {
        text = UTF8.decode(body as Buffer);
      } catch {
        return done(new AppError('INVALID_JSON'), undefined);
      }
      void parse(request, text, (error, parsed) => {
        if (error) return done(error, undefined);
        try {
          assertExactNumbers(text);
        } catch (refusal) {
          return done(refusal as Error, undefined);
        }
        done(null, parsed);
      });
    },
  );
}
