import type { StepFailure } from '../driver/step-failure';

/**
 * Deepest nesting a step's result may have. Results are kept in jsonb (checkpoint, step log) and
 * walked by recursive code (redaction, JSON.stringify); PostgreSQL refuses a document deeper than its
 * stack allows, so a partner's answer nested thousands of levels deep would fail the run's writes.
 */
export const MAX_RESULT_DEPTH = 100;

/**
 * Why a value could not be kept in a run record, or null: nested deeper than MAX_RESULT_DEPTH, or
 * a string or key with U+0000 (jsonb cannot hold it). Iterative, so the check itself never
 * overflows the stack however deep the value is.
 */
export function unstorableReason(value: unknown): string | null {
  const pending: [unknown, number][] = [[value, 0]];
  while (pending.length > 0) {
    const [item, depth] = pending.pop()!;
    if (typeof item === 'string') {
      if (item.includes('\u0000')) return 'contains the character U+0000';
      continue;
    }
    if (item === null || typeof item !== 'object') continue;
    if (depth >= MAX_RESULT_DEPTH) return `is nested deeper than ${MAX_RESULT_DEPTH} levels`;
    if (Array.isArray(item)) {
      for (const inner of item) pending.push([inner, depth + 1]);
      continue;
    }
    for (const [key, inner] of Object.entries(item)) {
      if (key.includes('\u0000')) return 'contains the character U+0000';
      pending.push([inner, depth + 1]);
    }
  }
  return null;
}

/**
 * A failure as the step log can keep it: details or entries the run could not store are left out
 * (saying why), and U+0000 in the message becomes U+FFFD.
 */
export function storableFailure(failure: StepFailure): StepFailure {
  const message = failure.message.replaceAll('\u0000', '\uFFFD');
  const detailsProblem = failure.details === undefined ? null : unstorableReason(failure.details);
  const providesProblem = failure.provides === undefined ? null : unstorableReason(failure.provides);
  if (message === failure.message && !detailsProblem && !providesProblem) return failure;
  return {
    ...failure,
    message,
    ...(detailsProblem ? { details: { omitted: `the details ${detailsProblem}` } } : {}),
    ...(providesProblem ? { provides: undefined } : {}),
  };
}
