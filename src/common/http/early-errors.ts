import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors/app-error';
import { errorBodyOf, type ErrorBody } from '../errors/error-body';
import type { ErrorCode } from '../errors/error-codes';

/** What Node's HTTP parser reports, by its error code, as the service's error code. */
const CODE_OF_CLIENT_ERROR: Record<string, ErrorCode> = {
  HPE_HEADER_OVERFLOW: 'HEADERS_TOO_LARGE',
  ERR_HTTP_REQUEST_TIMEOUT: 'REQUEST_TIMEOUT',
};

/**
 * Answers to requests refused before any route, hook or Nest filter sees them, in the service's one
 * error body instead of Fastify's own shape:
 * - by Node's HTTP parser: headers over Node's size limit (431), headers that did not all arrive
 *   within Node's headers timeout (408), anything it cannot parse (400);
 * - by Fastify's router: a URL it cannot decode (400), a path parameter over its length limit (414).
 *
 * Messages are in the default locale: the parser's refusals have no request to take a language from,
 * and the router's have a URL that could not be read. Until `translate` is set (the app is still
 * booting, nothing listens yet) the message is the code.
 */
export class EarlyErrorAnswers {
  translate: ((messageKey: string) => string) | undefined;

  /** Fastify's `clientErrorHandler`: writes the answer on the socket and closes it. */
  readonly onClientError = (error: NodeJS.ErrnoException, socket: Socket): void => {
    // A reset connection has no one to answer.
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    if (socket.writable) {
      const appError = new AppError(CODE_OF_CLIENT_ERROR[error.code ?? ''] ?? 'BAD_REQUEST');
      const body = JSON.stringify(this.bodyOf(appError));
      socket.write(
        `HTTP/1.1 ${appError.status} ${STATUS_CODES[appError.status]}\r\n` +
          `Content-Type: application/json; charset=utf-8\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    }
    socket.destroy(error);
  };

  /**
   * The server's `checkExpectation`: an `Expect` other than `100-continue`, which Node would answer
   * 417 with an empty body.
   */
  readonly onUnmetExpectation = (_request: IncomingMessage, response: ServerResponse): void => {
    const appError = new AppError('EXPECTATION_FAILED');
    const body = JSON.stringify(this.bodyOf(appError));
    response.writeHead(appError.status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      connection: 'close',
    });
    response.end(body);
  };

  /**
   * An HTTP/1.1 request without `Host` (which Node is told to let through, to answer here in the one
   * error body instead of its empty 400): true when it was answered.
   */
  answeredMissingHost(request: FastifyRequest, reply: FastifyReply): boolean {
    const raw = request.raw;
    if (raw.headers.host !== undefined || raw.httpVersionMajor !== 1 || raw.httpVersionMinor !== 1)
      return false;
    void reply
      .code(400)
      .header('content-type', 'application/json; charset=utf-8')
      .header('connection', 'close')
      .send(this.bodyOf(new AppError('BAD_REQUEST')));
    return true;
  }

  /** Fastify's `frameworkErrors`: what its router refuses while finding the route. */
  readonly onFrameworkError = (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    const appError = new AppError(error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'URI_TOO_LONG' : 'BAD_REQUEST');
    void reply
      .code(appError.status)
      .header('content-type', 'application/json; charset=utf-8')
      .header('x-request-id', request.id)
      .send(this.bodyOf(appError));
  };

  private bodyOf(error: AppError): ErrorBody {
    return errorBodyOf(error, this.translate?.(error.messageKey) ?? error.code);
  }
}
