import type { LightMyRequestResponse } from 'fastify';
import { bodyOf } from '../utils/expect-status';
import type { TestApp } from '../utils/test-app';

/** What `POST /api/data/:configId` answers with its 201: the new record's id and the record. */
export interface CreatedRecord {
  success: true;
  dataId: string;
  data: Record<string, any>;
}

type Submission = [
  t: TestApp,
  token: string,
  configId: string,
  data: Record<string, unknown>,
  headers?: Record<string, string>,
];

/** Submits `data` to a form as `token`'s user and returns the answer as it is (any status). */
export function postRecord(
  ...[t, token, configId, data, headers]: Submission
): Promise<LightMyRequestResponse> {
  return t.request({ method: 'POST', url: `/api/data/${configId}`, token, payload: data, headers });
}

/**
 * Creates a record through the API (the set-up many suites wrote out as a request and an
 * `expect(…).toBe(201)`); fails the test, with the answer, on anything but 201.
 */
export async function createRecord(...submission: Submission): Promise<CreatedRecord> {
  return bodyOf(await postRecord(...submission), 201, 'record create');
}

/** Replaces a record's data through the API (PUT); fails the test, with the answer, on anything but 200. */
export async function updateRecord(
  t: TestApp,
  token: string,
  configId: string,
  dataId: string,
  data: Record<string, unknown>,
): Promise<Record<string, any>> {
  const url = `/api/data/${configId}/${dataId}`;
  return bodyOf(await t.request({ method: 'PUT', url, token, payload: data }), 200, 'record update');
}
