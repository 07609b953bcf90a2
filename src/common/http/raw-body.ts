import type { FastifyInstance, FastifyRequest } from 'fastify';

/** The content type a raw-body route's requests are parsed as: not at all. */
const UNREAD = 'application/x-fdws-unread-body';

declare module 'fastify' {
  interface FastifyRequest {
    /** On a raw-body route: the Content-Type the client sent (the body itself is left unread in `raw`). */
    rawBodyContentType?: string;
  }
}

/** The media type of a Content-Type header, lower case, without parameters. */
function mediaTypeOf(header: string | undefined): string {
  return (header ?? '').split(';')[0].trim().toLowerCase();
}

/**
 * Routes (`METHOD url` as Fastify names them) whose body no parser reads: the handler streams it
 * from `request.raw` whatever its type, so neither BODY_LIMIT nor a buffer of the whole body
 * applies (the handler enforces its own limit while reading). The client's Content-Type is kept in
 * `request.rawBodyContentType`. Bodies of the `parsed` media types (multipart/form-data, whose
 * parser also leaves the body to the handler) keep their own parser.
 */
export function registerRawBodyRoutes(
  fastify: FastifyInstance,
  routes: readonly string[],
  parsed: readonly string[] = [],
): void {
  const raw = new Set(routes);
  fastify.addContentTypeParser(UNREAD, (_request, _payload, done) => done(null, undefined));
  fastify.addHook('onRequest', (request: FastifyRequest, _reply, done) => {
    if (
      raw.has(`${request.method} ${request.routeOptions.url}`) &&
      !parsed.includes(mediaTypeOf(request.headers['content-type']))
    ) {
      request.rawBodyContentType = request.headers['content-type'];
      request.headers['content-type'] = UNREAD;
    }
    done();
  });
}
