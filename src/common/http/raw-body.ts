import type { FastifyInstance, FastifyRequest } from 'fastify';

/** The content type a raw-body route's requests are parsed as: not at all. */
const UNREAD = 'application/x-fdws-unread-body';

declare module 'fastify' {
  interface FastifyRequest {
    /** On a raw-body route: the Content-Type the client sent (the body itself is left unread in `raw`). */
    rawBodyContentType?: string;
  }
}

/**
 * Routes (`METHOD url` as Fastify names them) whose body no parser reads: the handler streams it
 * from `request.raw` whatever its type, so neither BODY_LIMIT nor a buffer of the whole body
 * applies (the handler enforces its own limit while reading). The client's Content-Type is kept in
 * `request.rawBodyContentType`.
 */
export function registerRawBodyRoutes(fastify: FastifyInstance, routes: readonly string[]): void {
  const raw = new Set(routes);
  fastify.addContentTypeParser(UNREAD, (_request, _payload, done) => done(null, undefined));
  fastify.addHook('onRequest', (request: FastifyRequest, _reply, done) => {
    if (raw.has(`${request.method} ${request.routeOptions.url}`)) {
      request.rawBodyContentType = request.headers['content-type'];
      request.headers['content-type'] = UNREAD;
    }
    done();
  });
}
