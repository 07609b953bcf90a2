import type { FastifyInstance } from 'fastify';
import { AppError, type FieldError } from '../errors/app-error';

/** A high surrogate not followed by a low one, or a low surrogate not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

const UNSTORABLE = new RegExp(`${LONE_SURROGATE.source}|\u0000`, 'g');

/** `text` with each NUL and lone surrogate written as its `\uXXXX` escape: storable, and still telling. */
export function storableText(text: string): string {
  return text.replace(UNSTORABLE, (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

interface Frame {
  value: unknown;
  depth: number;
  parent: Frame | null;
  key: string;
}

function pathOf(frame: Frame): string {
  const keys: string[] = [];
  for (let at: Frame | null = frame; at && at.parent; at = at.parent) keys.push(at.key);
  return keys.reverse().join('.');
}

function malformed(field: string): FieldError {
  return {
    field: field || '(body)',
    rule: 'wellFormedUnicode',
    message: 'contains malformed Unicode (a lone surrogate)',
  };
}

/** The field error of a NUL character, which PostgreSQL can store in neither `text` nor `jsonb`. */
export function nullCharacter(field: string): FieldError {
  return {
    field: field || '(body)',
    rule: 'noNullCharacter',
    message: 'contains a NUL character (\\u0000), which cannot be stored',
  };
}

/** The field error of a string or key that cannot be stored as it is, or null when it can. */
function textProblem(text: string, field: () => string): FieldError | null {
  if (LONE_SURROGATE.test(text)) return malformed(field());
  if (text.includes('\u0000')) return nullCharacter(field());
  return null;
}

/**
 * Checks a parsed body without recursion, so no depth can overflow the stack: `BODY_TOO_DEEP` (400)
 * when objects and arrays nest deeper than `maxDepth` levels, `VALIDATION_FAILED` (422) naming the
 * field when a string or key holds a lone UTF-16 surrogate or a NUL character (which the validators
 * and the database would otherwise choke on); null when the body is fine.
 */
export function bodyShapeProblem(body: unknown, maxDepth: number): AppError | null {
  const stack: Frame[] = [{ value: body, depth: 0, parent: null, key: '' }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    const { value } = frame;
    if (typeof value === 'string') {
      const problem = textProblem(value, () => pathOf(frame));
      if (problem) return new AppError('VALIDATION_FAILED', { validationErrors: [problem] });
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    const depth = frame.depth + 1;
    if (depth > maxDepth) return new AppError('BODY_TOO_DEEP', { params: { limit: maxDepth } });
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) {
        stack.push({ value: value[i], depth, parent: frame, key: String(i) });
      }
      continue;
    }
    const keys = Object.keys(value);
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i];
      const child: Frame = { value: (value as Record<string, unknown>)[key], depth, parent: frame, key };
      const problem = textProblem(key, () => pathOf(child));
      if (problem) return new AppError('VALIDATION_FAILED', { validationErrors: [problem] });
      stack.push(child);
    }
  }
  return null;
}

/** `bodyShapeProblem`, thrown. */
export function assertBodyShape(body: unknown, maxDepth: number): void {
  const problem = bodyShapeProblem(body, maxDepth);
  if (problem) throw problem;
}

/**
 * The same text checks on a query string (names and values, flat as Fastify parses them): a NUL
 * reaching a filter would otherwise fail in the database. The field is the parameter's name.
 */
export function assertQueryText(query: unknown): void {
  if (query === null || typeof query !== 'object') return;
  for (const [name, value] of Object.entries(query)) {
    const field = () => name.slice(0, 100);
    const values: unknown[] = Array.isArray(value) ? value : [value];
    const problem =
      textProblem(name, field) ??
      values.reduce<FieldError | null>(
        (found, item) => found ?? (typeof item === 'string' ? textProblem(item, field) : null),
        null,
      );
    if (problem) throw new AppError('VALIDATION_FAILED', { validationErrors: [problem] });
  }
}

/**
 * Refuses a body with a `Content-Encoding` (415) before it is read, and runs `assertBodyShape` on
 * every parsed body and `assertQueryText` on every query, before validation pipes, guards or
 * handlers see them.
 */
export function registerBodyGuard(fastify: FastifyInstance, maxDepth: number): void {
  // Bodies are never decompressed: a compressed one could only be misread, so it is refused unread.
  fastify.addHook('preParsing', (request, _reply, payload, done) => {
    const encoding = request.headers['content-encoding'];
    if (encoding === undefined || encoding.trim().toLowerCase() === 'identity') return done(null, payload);
    done(
      new AppError('UNSUPPORTED_MEDIA_TYPE', {
        details: { reason: 'a Content-Encoding other than identity', accepted: 'identity' },
      }),
      payload,
    );
  });
  fastify.addHook('preValidation', (request, _reply, done) => {
    try {
      assertQueryText(request.query);
      if (request.body !== undefined) assertBodyShape(request.body, maxDepth);
      done();
    } catch (error) {
      done(error as Error);
    }
  });
}
