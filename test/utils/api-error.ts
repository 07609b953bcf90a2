import type { LightMyRequestResponse } from 'fastify';

/**
 * The body every refused request answers: `success: false`, the status again as `statusCode`, and
 * `fields` (`code`, `error`, `details`, `validationErrors`, ...). Suites wrote this envelope out in
 * full for each expected error; with it an assertion names only what differs.
 */
export function errorBody(statusCode: number, fields: Record<string, unknown>): Record<string, unknown> {
  return { success: false, statusCode, ...fields };
}

/** Asserts the status and that the body is exactly {@link errorBody} of it with `fields`. */
export function expectError(
  response: LightMyRequestResponse,
  statusCode: number,
  fields: Record<string, unknown>,
): void {
  expect(response.statusCode).toBe(statusCode);
  expect(response.json()).toEqual(errorBody(statusCode, fields));
}
