import type { Readable } from 'node:stream';
import multipart from '@fastify/multipart';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors/app-error';
import { assertBodyShape } from './body-guard';
import { assertExactNumbers } from './exact-numbers';
import { parseValues } from './form-body';

export const MULTIPART = 'multipart/form-data';

/** A file part of a multipart body: its bytes are read once, as they arrive. */
export interface MultipartFile {
  kind: 'file';
  /** The part's field name. */
  name: string;
  /** The client's name of the file (only ever shown). */
  filename: string;
  body: AsyncIterable<Buffer>;
}

/** A text part: its value as sent (a part sent as `application/json` arrives parsed). */
export interface MultipartText {
  kind: 'text';
  name: string;
  value: unknown;
}

export type MultipartPart = MultipartFile | MultipartText;

/** Bounds of one request's multipart body. */
export interface MultipartLimits {
  /** Largest file in bytes (the route checks its own, lower limits as the bytes arrive). */
  fileSize: number;
  files: number;
  /** Text parts, and the largest text part in bytes. */
  fields: number;
  fieldSize: number;
}

/**
 * Registers @fastify/multipart (its parser only marks the request: nothing is read before the
 * handler streams the parts) and keeps multipart bodies to the `METHOD url` routes given; on any
 * other route they are a 415 like any unsupported body.
 */
export async function registerMultipartBodies(
  app: NestFastifyApplication,
  routes: readonly string[],
  limits: MultipartLimits,
): Promise<void> {
  await app.register(multipart, { limits: { ...limits, parts: partsLimit(limits) } });
  const accepting = new Set(routes);
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('preValidation', (request, _reply, done) => {
      if (request.routeOptions.url === undefined || !request.isMultipart()) return done();
      if (accepting.has(`${request.method} ${request.routeOptions.url}`)) return done();
      done(new AppError('UNSUPPORTED_MEDIA_TYPE'));
    });
}

/** One part more than files and text parts: the parser then names which of the two was passed. */
function partsLimit(limits: Partial<MultipartLimits>): number {
  return (limits.files ?? 0) + (limits.fields ?? 0) + 1;
}

export function isMultipart(request: FastifyRequest): boolean {
  return typeof request.isMultipart === 'function' && request.isMultipart();
}

/**
 * The parts of a multipart request, in order, for the route to consume one by one (a file part
 * must be read to its end, or the iteration stopped, before the next part comes). `limits` narrow
 * the registered ones for this route. The plugin's and the parser's errors (a cut or malformed
 * body, a limit passed) become 400 MULTIPART_INVALID naming the reason, also while a file is read.
 */
export async function* multipartParts(
  request: FastifyRequest,
  limits: Partial<MultipartLimits> = {},
): AsyncIterable<MultipartPart> {
  const narrowed =
    limits.files !== undefined || limits.fields !== undefined
      ? { ...limits, parts: partsLimit(limits) }
      : limits;
  try {
    for await (const part of request.parts({ limits: narrowed })) {
      if (part.type === 'file') {
        // A consumer that stops reading a file destroys it: the plugin then ends the iteration.
        yield { kind: 'file', name: part.fieldname, filename: part.filename, body: fileBytes(part.file) };
      } else {
        if (part.valueTruncated)
          throw new AppError('PAYLOAD_TOO_LARGE', {
            details: { part: part.fieldname, limit: limits.fieldSize ?? null },
          });
        yield { kind: 'text', name: part.fieldname, value: part.value };
      }
    }
  } catch (error) {
    throw asMultipartError(error);
  }
}

async function* fileBytes(file: Readable): AsyncIterable<Buffer> {
  try {
    for await (const chunk of file) yield chunk as Buffer;
  } catch (error) {
    throw asMultipartError(error);
  }
}

const REASONS: Record<string, string> = {
  FST_FILES_LIMIT: 'too many files',
  FST_FIELDS_LIMIT: 'too many text parts',
  FST_PARTS_LIMIT: 'too many parts',
  FST_PROTO_VIOLATION: 'a part name that is not allowed',
  FST_INVALID_JSON_FIELD_ERROR: 'a part sent as application/json is not JSON',
  FST_MP_PREMATURE_CLOSE: 'the body ended before its last part',
  FST_INVALID_MULTIPART_CONTENT_TYPE: 'the body is not multipart/form-data',
};

function asMultipartError(error: unknown): unknown {
  if (error instanceof AppError) return error;
  const code = (error as { code?: unknown })?.code;
  const reason =
    typeof code === 'string' && REASONS[code]
      ? REASONS[code]
      : // Busboy's own messages ("Unexpected end of form", "Malformed part header") name no input.
        error instanceof Error
        ? error.message.slice(0, 200)
        : 'unreadable';
  return new AppError('MULTIPART_INVALID', { params: { reason }, details: { reason } });
}

/**
 * The JSON of a text part with the checks a JSON body gets (prototype keys, depth, malformed
 * Unicode, NUL, inexact numbers); 400 INVALID_JSON when it is not JSON. A part the client sent as
 * `application/json` arrives parsed by the plugin (which refuses prototype keys): the number check,
 * which needs the text, applies to text parts only.
 */
export function jsonPartValue(value: unknown, maxDepth: number): unknown {
  let parsed = value;
  if (typeof value === 'string') {
    try {
      parsed = parseValues(value);
    } catch {
      throw new AppError('INVALID_JSON');
    }
    assertExactNumbers(value);
  }
  assertBodyShape(parsed, maxDepth);
  return parsed;
}
