import type { LightMyRequestResponse } from 'fastify';

/**
 * The JSON body of a set-up request that must answer `status`; on any other status it throws with
 * what failed, the status and the body, so the test fails at the step that went wrong.
 */
export function bodyOf<T = any>(response: LightMyRequestResponse, status: number, what: string): T {
  if (response.statusCode !== status)
    throw new Error(`${what} failed: ${response.statusCode} ${response.body}`);
  return response.json();
}
