import type { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors/app-error';

/**
 * A request body left unread for the handler to stream (a bulk import's file). The stream is held
 * in a private field: the body guard walks a body's own keys, and a stream's would lead it through
 * the socket and back.
 */
export class StreamedBody {
  readonly #stream: Readable;

  constructor(stream: Readable) {
    this.#stream = stream;
  }

  get stream(): Readable {
    return this.#stream;
  }
}

/**
 * Bodies of these media types reach the named routes (`METHOD url` as Fastify names the route) as a
 * StreamedBody, not bounded by BODY_LIMIT (the route bounds what it reads); on any other route they
 * are a 415.
 */
export function registerStreamedBodies(
  fastify: FastifyInstance,
  routes: Record<string, readonly string[]>,
): void {
  const byType = new Map<string, Set<string>>();
  for (const [route, types] of Object.entries(routes)) {
    for (const type of types) {
      if (!byType.has(type)) byType.set(type, new Set());
      byType.get(type)!.add(route);
    }
  }
  for (const [type, accepting] of byType) {
    fastify.addContentTypeParser(type, (request, payload, done) => {
      // No such route: the 404 answers.
      if (request.routeOptions.url === undefined) return done(null, undefined);
      if (!accepting.has(`${request.method} ${request.routeOptions.url}`))
        return done(new AppError('UNSUPPORTED_MEDIA_TYPE'), undefined);
      done(null, new StreamedBody(payload));
    });
  }
}
