import { OutboundHttpError } from './outbound-http.error';
import { OutboundErrorCode } from './outbound-errors';

/**
 * Parses and checks a request URL: absolute, `http:` or `https:` only. The WHATWG parser also
 * canonicalises the host (`2130706434` becomes `127.0.0.2`, `[::ffff:127.0.0.1]` becomes
 * `[::ffff:7f00:1]`), so the guard always judges the address the socket will really use.
 */
export function parseTarget(raw: string, base?: URL): URL {
  let url: URL;
  try {
    url = new URL(raw, base);
  } catch {
    throw new OutboundHttpError('The URL is not valid', { code: OutboundErrorCode.INVALID_URL });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new OutboundHttpError(`Only http and https URLs may be called (got ${url.protocol})`, {
      code: OutboundErrorCode.INVALID_URL,
    });
  }
  if (url.hostname === '') {
    throw new OutboundHttpError('The URL has no host', { code: OutboundErrorCode.INVALID_URL });
  }
  return url;
}

/** The port the connection will use, defaulted from the scheme. */
export function targetPort(url: URL): number {
  if (url.port !== '') return Number(url.port);
  return url.protocol === 'https:' ? 443 : 80;
}

/** The host as the socket sees it: IPv6 literals without their brackets. */
export function socketHost(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}
