import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors/app-error';

/**
 * Keep-alive friendly shutdown. Once `close()` starts (SIGTERM with shutdown hooks, or `app.close()`):
 * requests already running finish normally but their responses carry `Connection: close`, so the
 * client does not reuse the socket and the server can close it as soon as the response is sent;
 * idle keep-alive sockets are closed at once (`forceCloseConnections: 'idle'`); a request that still
 * arrives on an open connection is answered 503 `SHUTTING_DOWN` with `Connection: close` in the error
 * body. A client or load balancer thus sees a clean answer or a closed connection, never a reset.
 */
export function registerGracefulClose(fastify: FastifyInstance): void {
  let closing = false;
  fastify.addHook('preClose', async () => {
    closing = true;
  });
  // Callback hooks, not async ones: they run on every request, and an async hook costs a promise.
  fastify.addHook('onRequest', (_request, reply, done) => {
    if (!closing) return done();
    reply.header('connection', 'close');
    done(new AppError('SHUTTING_DOWN'));
  });
  fastify.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });
}
