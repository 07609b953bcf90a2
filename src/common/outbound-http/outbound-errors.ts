import { OutboundHttpError } from './outbound-http.error';

/** The stable codes of an outbound request's failures (the step adds `HTTP_STATUS`). */
export const OutboundErrorCode = {
  DESTINATION_REFUSED: 'DESTINATION_REFUSED',
  INVALID_URL: 'INVALID_URL',
  TIMEOUT: 'TIMEOUT',
  NETWORK_ERROR: 'NETWORK_ERROR',
  TLS_ERROR: 'TLS_ERROR',
  RESPONSE_TOO_LARGE: 'RESPONSE_TOO_LARGE',
  TOO_MANY_REDIRECTS: 'TOO_MANY_REDIRECTS',
  /** A redirect to another origin that would re-send a body holding an env value. */
  REDIRECT_REFUSED: 'REDIRECT_REFUSED',
  /** An env value on its way to an origin WORKFLOW_ENV_ORIGINS does not bind it to. */
  SECRET_ORIGIN_REFUSED: 'SECRET_ORIGIN_REFUSED',
  REQUEST_FAILED: 'REQUEST_FAILED',
} as const;

/** Raised by the guard before any byte is sent; carried through axios as the error's `cause`. */
export class DestinationRefusedError extends Error {
  readonly code = 'EDESTINATIONREFUSED';

  constructor(
    readonly host: string,
    readonly address: string,
    readonly reason: string,
  ) {
    super(
      host === address
        ? `Destination ${address} refused (${reason})`
        : `Destination ${host} refused: it resolves to ${address} (${reason})`,
    );
    this.name = 'DestinationRefusedError';
  }
}

/** Transient socket and DNS failures: worth another attempt. */
const RETRYABLE_NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'EHOSTDOWN',
  'EAI_AGAIN',
  'ENOTFOUND',
  'EADDRNOTAVAIL',
  'ERR_SOCKET_CONNECTION_TIMEOUT',
  'UND_ERR_SOCKET',
]);

const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_MISMATCH|EPROTO$)/;

/** Maps whatever a request threw (axios, node:net, our guard) onto an `OutboundHttpError`. */
export function toOutboundHttpError(error: unknown, host: string): OutboundHttpError {
  if (error instanceof OutboundHttpError) return error;
  const refused = findInChain(error, (e) => e instanceof DestinationRefusedError);
  if (refused instanceof DestinationRefusedError) {
    return new OutboundHttpError(refused.message, {
      code: OutboundErrorCode.DESTINATION_REFUSED,
      details: { host: refused.host, address: refused.address, reason: refused.reason },
    });
  }
  const code = errorCode(error);
  const message = error instanceof Error ? error.message : String(error);
  if (code !== undefined && RETRYABLE_NETWORK_CODES.has(code)) {
    return new OutboundHttpError(`Request to ${host} failed: ${code}`, {
      code: OutboundErrorCode.NETWORK_ERROR,
      retryable: true,
      details: { host, errorCode: code },
    });
  }
  if (code !== undefined && TLS_CODE.test(code)) {
    return new OutboundHttpError(`TLS failure with ${host}: ${code}`, {
      code: OutboundErrorCode.TLS_ERROR,
      details: { host, errorCode: code },
    });
  }
  return new OutboundHttpError(`Request to ${host} failed: ${message}`, {
    code: OutboundErrorCode.REQUEST_FAILED,
    details: { host, errorCode: code ?? null },
  });
}

/** The first error code found walking `error.cause` (axios copies the socket's code but not always). */
function errorCode(error: unknown): string | undefined {
  const found = findInChain(
    error,
    (e) =>
      typeof (e as { code?: unknown }).code === 'string' &&
      !(e as { code: string }).code.startsWith('ERR_BAD'),
  );
  return found === undefined ? undefined : (found as { code: string }).code;
}

function findInChain(error: unknown, predicate: (e: object) => boolean): object | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth++) {
    if (predicate(current)) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}
