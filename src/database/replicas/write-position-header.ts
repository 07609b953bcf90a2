import type { FastifyInstance } from 'fastify';
import { DATABASE_POSITION_HEADER, type ReadRouting } from './read-routing';

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * With read replicas: every answer to a request that may have written (any method but GET, HEAD and
 * OPTIONS, except a routed read) carries the primary's WAL position, taken
 * after the handler's transactions committed, in `X-Database-Position`; the position is also kept
 * for the caller (WritePositions). Failed requests too: a write may have committed before the error.
 */
export function registerWritePositionHeader(fastify: FastifyInstance, routing: ReadRouting): void {
  if (!routing.enabled) return;
  fastify.addHook('onSend', async (request, reply, payload) => {
    if (READ_METHODS.has(request.method) || request.routedRead) return payload;
    const position = await routing.afterWrite(request.user?.userId ?? null);
    if (position !== null) reply.header(DATABASE_POSITION_HEADER, position);
    return payload;
  });
}
