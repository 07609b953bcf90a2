import { OutboundHttpError } from './outbound-http.error';
import { OutboundErrorCode } from './outbound-errors';
import { parseTarget } from './request-target';
import type { StreamedBody } from './streamed-body';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** One request of an exchange: the first, or one that follows a redirect. */
export interface Hop {
  method: HttpMethod;
  url: URL;
  headers: Record<string, string>;
  body?: string | Buffer | StreamedBody;
  /** What must never reach another origin (it carries an env value). */
  confined?: Confined;
}

/** The headers (names) and whether the body of a request may go only to the origin it was written for. */
export interface Confined {
  headers: readonly string[];
  body: boolean;
}

export const MAX_REDIRECTS = 5;

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const BODY_HEADERS = [
  'content-type',
  'content-length',
  'content-encoding',
  'content-language',
  'content-location',
];
const CREDENTIAL_HEADERS = ['authorization', 'cookie', 'proxy-authorization'];

export function isRedirect(status: number): boolean {
  return REDIRECT_STATUSES.has(status);
}

/**
 * The request that follows a redirect, as browsers do: 303 becomes a GET without body, 301/302
 * turn a POST into a GET, 307/308 keep method and body. On a hop to another origin, credentials
 * and the confined headers are dropped (and stay dropped), and a confined body that would be sent
 * again (307/308) refuses the redirect instead: it may only go where it was written for. The
 * target is not judged here: the guard does it when connecting.
 */
export function followRedirect(hop: Hop, status: number, location: string): Hop {
  const url = parseTarget(location, hop.url);
  const toGet = status === 303 || ((status === 301 || status === 302) && hop.method === 'POST');
  let headers = hop.headers;
  if (toGet) headers = without(headers, BODY_HEADERS);
  if (url.origin !== hop.url.origin) {
    if (!toGet && hop.body !== undefined && hop.confined?.body) {
      throw new OutboundHttpError(
        `A ${status} redirect to ${url.origin} would send a body holding an env value to another origin`,
        { code: OutboundErrorCode.REDIRECT_REFUSED, details: { status, origin: url.origin } },
      );
    }
    headers = without(headers, [...CREDENTIAL_HEADERS, ...(hop.confined?.headers ?? [])]);
  }
  const next = { url, headers, confined: hop.confined };
  return toGet ? { ...next, method: 'GET' } : { ...next, method: hop.method, body: hop.body };
}

function without(headers: Record<string, string>, names: readonly string[]): Record<string, string> {
  const dropped = new Set(names.map((name) => name.toLowerCase()));
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !dropped.has(name.toLowerCase())));
}
