import { postRecord } from '../utils/api-requests';
import { bodyOf } from '../utils/expect-status';
import type { TestApp } from '../utils/test-app';

/** What `POST /api/data/:configId` answers with its 201: the new record's id and the record. */
export interface CreatedRecord {
  success: true;
  dataId: string;
  data: Record<string, any>;
}

/**
 * Creates a record through the API (the set-up many suites wrote out as a request and an
 * `expect(…).toBe(201)`); fails the test, with the answer, on anything but 201.
 */
export async function createRecord(
  ...submission: [t: TestApp, token: string, configId: string, data: object, headers?: Record<string, string>]
): Promise<CreatedRecord> {
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
