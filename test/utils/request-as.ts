import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import type { TestApp } from './test-app';

/**
 * A request as one caller, its parts in a row (`token, method, url, payload?, headers?`), so that a
 * test sending many small requests writes each on one line instead of a six-line options object.
 */
export type Call = [
  token: string,
  method: NonNullable<InjectOptions['method']>,
  url: string,
  payload?: unknown,
  headers?: Record<string, string>,
];

/** Sends `call` through the test app (`t.request` with the bearer token). */
export function requestAs(
  t: TestApp,
  ...[token, method, url, payload, headers]: Call
): Promise<LightMyRequestResponse> {
  return t.request({ method, url, token, payload: payload as InjectOptions['payload'], headers });
}

/** The status code `call` is answered with. */
export async function statusAs(t: TestApp, ...call: Call): Promise<number> {
  return (await requestAs(t, ...call)).statusCode;
}
