import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../errors/app-error';
import { assertBodyShape } from './body-guard';
import { assertExactNumbers } from './exact-numbers';

const FORM = 'application/x-www-form-urlencoded';

/**
 * A form-encoded body in the shape the grid-library store sends (docs/grid-protocol.md section 16):
 * `values=<JSON object>` (insert), `key=<id>&values=<JSON object>` (update), `key=<id>` (remove).
 * The hook below replaces the parsed form with this, so a handler can tell it from a JSON body.
 */
export class StoreFormBody {
  constructor(
    readonly key: string | undefined,
    readonly values: Record<string, unknown> | undefined,
  ) {}
}

/** The form fields one route accepts, by `METHOD url` as Fastify names the route. */
export type FormBodyShapes = Record<string, readonly ('key' | 'values')[]>;

function refuse(reason: string, accepted: string): AppError {
  return new AppError('UNSUPPORTED_MEDIA_TYPE', {
    messageKey: 'errors.FORM_BODY_UNSUPPORTED',
    details: { reason, accepted },
  });
}

/** JSON.parse refusing the keys the JSON body parser refuses too (prototype poisoning). */
export function parseValues(text: string): unknown {
  return JSON.parse(text, function (key, value: unknown) {
    if (key === '__proto__') throw new SyntaxError('__proto__ key');
    if (key === 'constructor' && value !== null && typeof value === 'object' && 'prototype' in value)
      throw new SyntaxError('constructor.prototype key');
    return value;
  });
}

function isForm(request: FastifyRequest): boolean {
  const type = request.headers['content-type'];
  return typeof type === 'string' && type.split(';')[0].trim().toLowerCase() === FORM;
}

/**
 * Form-encoded bodies are accepted only on the routes in `shapes` and only in their exact shape;
 * anything else is a 415 naming what is accepted, so a form body is never stored as data. The JSON
 * in `values` gets the same depth and Unicode checks as a JSON body.
 */
export function registerFormBodies(fastify: FastifyInstance, shapes: FormBodyShapes, maxDepth: number): void {
  const accepted = Object.entries(shapes)
    .map(
      ([route, fields]) =>
        `${route}: ${fields.map((f) => (f === 'key' ? 'key=<id>' : 'values=<JSON object>')).join('&')}`,
    )
    .join('; ');
  const checkFormBody = (request: FastifyRequest): void => {
    if (request.routeOptions.url === undefined) return; // no such route: the 404 answers
    const fields = shapes[`${request.method} ${request.routeOptions.url}`];
    if (!fields) throw refuse('a form-encoded body is not accepted on this route', accepted);
    const form = request.body as Record<string, unknown>;
    const names = Object.keys(form);
    if (names.length !== fields.length || names.some((name) => !(fields as string[]).includes(name))) {
      throw refuse(`the form fields must be exactly ${fields.join(', ')}`, accepted);
    }
    if (names.some((name) => typeof form[name] !== 'string')) {
      throw refuse('each form field must be given once', accepted);
    }
    const key = form.key as string | undefined;
    if (key !== undefined && key === '') throw refuse('key must not be empty', accepted);
    let values: Record<string, unknown> | undefined;
    if (form.values !== undefined) {
      let parsed: unknown;
      try {
        parsed = parseValues(form.values as string);
      } catch {
        throw refuse('values must be JSON', accepted);
      }
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
        throw refuse('values must be a JSON object', accepted);
      }
      assertBodyShape(parsed, maxDepth);
      assertExactNumbers(form.values as string);
      values = parsed as Record<string, unknown>;
    }
    request.body = new StoreFormBody(key, values);
  };

  // A callback hook (no promise per request); a JSON body leaves at the first test.
  fastify.addHook('preValidation', (request, _reply, done) => {
    if (request.body === undefined || !isForm(request)) return done();
    try {
      checkFormBody(request);
      done();
    } catch (error) {
      done(error as Error);
    }
  });
}
