/**
 * The body a refused request answers with (`success: false`, the code, the HTTP status and the
 * message), plus what a refusal adds (`details`, `validationErrors`): tests compare whole bodies
 * against it instead of spelling the four fields out each time.
 */
export function errorBody(
  statusCode: number,
  code: string,
  error: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return { success: false, code, statusCode, error, ...extra };
}
