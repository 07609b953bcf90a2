import { parseTarget } from './request-target';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** One request of an exchange: the first, or one that follows a redirect. */
export interface Hop {
  method: HttpMethod;
  url: URL;
  headers: Record<string, string>;
  body?: string | Buffer;
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
 * turn a POST into a GET, 307/308 keep method and body. Credentials are dropped on a cross-origin
 * hop (and stay dropped). The target is not judged here: the guard does it when connecting.
 */
export function followRedirect(hop: Hop, status: number, location: string): Hop {
  const url = parseTarget(location, hop.url);
  const toGet = status === 303 || ((status === 301 || status === 302) && hop.method === 'POST');
  let headers = hop.headers;
  if (toGet) headers = without(headers, BODY_HEADERS);
  if (url.origin !== hop.url.origin) headers = without(headers, CREDENTIAL_HEADERS);
  return toGet ? { method: 'GET', url, headers } : { method: hop.method, url, headers, body: hop.body };
}

function without(headers: Record<string, string>, names: string[]): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !names.includes(name.toLowerCase())));
}
