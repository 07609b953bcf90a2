import type { LightMyRequestResponse } from 'fastify';
import type { TestApp } from './test-app';

/**
 * The plain create requests most suites send, answered as they come: the test asserts the status
 * and body it expects (the factories, by contrast, create what a test needs and throw otherwise).
 */

/** POST /api/configs with exactly `body` (nothing merged in). */
export function postConfig(t: TestApp, token: string, body: object): Promise<LightMyRequestResponse> {
  return t.request({ method: 'POST', url: '/api/configs', token, payload: body });
}

/** POST /api/data/:configId of `payload` (an object as JSON, text as sent, with the `headers` given). */
export function postRecord(
  t: TestApp,
  token: string,
  configId: string,
  payload: object | string,
  headers?: Record<string, string>,
): Promise<LightMyRequestResponse> {
  return t.request({ method: 'POST', url: `/api/data/${configId}`, token, headers, payload });
}
