import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import helmet from 'helmet';

const applyHelmet = helmet({
  contentSecurityPolicy: {
    directives: {
      defaultSrc: ["'self'"],
      // Swagger UI at /api-docs uses inline scripts and styles.
      scriptSrc: ["'self'", "'unsafe-inline'"],
      styleSrc: ["'self'", "'unsafe-inline'"],
      imgSrc: ["'self'", 'data:'],
    },
  },
});

/**
 * The headers helmet sets with this configuration, taken once by running its middleware against a
 * response that only records them. They depend on nothing of the request (no nonce, no per-request
 * directive), so every response can carry the same ones: helmet itself would rebuild the policy's
 * text and call setHeader a dozen times per request.
 */
function helmetHeaders(): Record<string, string> {
  const headers: Record<string, string> = {};
  const recorder = {
    setHeader: (name: string, value: string | number) => {
      headers[name.toLowerCase()] = String(value);
    },
    // X-Powered-By, which Fastify never sets.
    removeHeader: () => undefined,
  };
  let failure: unknown;
  applyHelmet({} as IncomingMessage, recorder as unknown as ServerResponse, (error?: unknown) => {
    failure = error;
  });
  if (failure !== undefined) throw new Error('helmet refused its configuration', { cause: failure });
  return headers;
}

/** Helmet's headers on every response, errors and 404s included (onRequest runs for all of them). */
export function registerSecurityHeaders(fastify: FastifyInstance): void {
  const headers = helmetHeaders();
  fastify.addHook('onRequest', (_request, reply, done) => {
    reply.headers(headers);
    done();
  });
}
