import type { FastifyInstance } from 'fastify';
import { AppError, type FieldError } from '../errors/app-error';

/** A high surrogate not followed by a low one, or a low surrogate not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

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

/**
 * Checks a parsed body without recursion, so no depth can overflow the stack: it throws
 * `BODY_TOO_DEEP` (400) when objects and arrays nest deeper than `maxDepth` levels, and
 * `VALIDATION_FAILED` (422) naming the field when a string or key holds a lone UTF-16 surrogate
 * (which the validators and the database would otherwise choke on).
 */
export function assertBodyShape(body: unknown, maxDepth: number): void {
  const stack: Frame[] = [{ value: body, depth: 0, parent: null, key: '' }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    const { value } = frame;
    if (typeof value === 'string') {
      if (LONE_SURROGATE.test(value)) {
        throw new AppError('VALIDATION_FAILED', { validationErrors: [malformed(pathOf(frame))] });
      }
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    const depth = frame.depth + 1;
    if (depth > maxDepth) throw new AppError('BODY_TOO_DEEP', { params: { limit: maxDepth } });
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
      if (LONE_SURROGATE.test(key)) {
        throw new AppError('VALIDATION_FAILED', { validationErrors: [malformed(pathOf(child))] });
      }
      stack.push(child);
    }
  }
}

/** Runs `assertBodyShape` on every parsed body, before validation pipes, guards or handlers see it. */
export function registerBodyGuard(fastify: FastifyInstance, maxDepth: number): void {
  fastify.addHook('preValidation', (request, _reply, done) => {
    try {
      if (request.body !== undefined) assertBodyShape(request.body, maxDepth);
      done();
    } catch (error) {
      done(error as Error);
    }
  });
}
