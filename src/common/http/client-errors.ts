import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { AppError } from '../errors/app-error';
import { errorBodyOf } from '../errors/error-body';
import type { ErrorCode } from '../errors/error-codes';

/** What Node's HTTP parser reports, by its error code, as the service's error code. */
const CODE_OF_CLIENT_ERROR: Record<string, ErrorCode> = {
  HPE_HEADER_OVERFLOW: 'HEADERS_TOO_LARGE',
  ERR_HTTP_REQUEST_TIMEOUT: 'REQUEST_TIMEOUT',
};

/**
 * The answer to a request Node's HTTP parser refuses before Fastify sees it: headers over Node's
 * size limit (431), a request that did not arrive within the server's request timeout (408),
 * anything it cannot parse (400). Fastify's own answer has a body of another shape; this one is the
 * service's error body. There is no request yet, so no Accept-Language and no request id: the
 * message is in the default locale. Until `translate` is set (the app is still booting, nothing
 * listens yet) the message is the code.
 */
export class ClientErrorAnswers {
  translate: ((messageKey: string) => string) | undefined;

  /** Fastify's `clientErrorHandler` (bound to nothing: it uses no Fastify state). */
  readonly handle = (error: NodeJS.ErrnoException, socket: Socket): void => {
    // A reset connection has no one to answer.
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    if (socket.writable) {
      const appError = new AppError(CODE_OF_CLIENT_ERROR[error.code ?? ''] ?? 'BAD_REQUEST');
      const body = JSON.stringify(
        errorBodyOf(appError, this.translate?.(appError.messageKey) ?? appError.code),
      );
      socket.write(
        `HTTP/1.1 ${appError.status} ${STATUS_CODES[appError.status]}\r\n` +
          `Content-Type: application/json; charset=utf-8\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    }
    socket.destroy(error);
  };
}
