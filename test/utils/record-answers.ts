/**
 * A record as the API answers it: what every freshly created record of a version-1 form has, and the
 * fields the test names (`_id`, `configId`, `userId`, `data`, `computedResults`, or any it overrides).
 */
export function storedRecord(fields: Record<string, unknown>): Record<string, unknown> {
  return {
    siteId: null,
    isActive: true,
    createdAt: expect.stringMatching(/Z$/),
    updatedAt: expect.stringMatching(/Z$/),
    version: 1,
    configVersion: 1,
    ...fields,
  };
}

/**
 * The whole answer of a record create (`POST /api/data/:configId` and what answers like it): the
 * new record under `data` with `_id` the answer's `dataId`, and the computed values, which the
 * record itself holds too when it has any.
 */
export function createdAnswer(
  dataId: string,
  fields: { configId: string; userId: string | null; data: object; computedResults?: object },
): Record<string, unknown> {
  return {
    success: true,
    dataId: expect.any(String),
    computedResults: fields.computedResults ?? {},
    data: storedRecord({ _id: dataId, ...fields }),
  };
}
