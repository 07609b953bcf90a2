import { OutboundHttpError, type OutboundResponse, parseRetryAfter } from '../common/outbound-http';

/** How much of an answer's body an attempt keeps. */
export const KEPT_ANSWER_CHARS = 1024;

/**
 * What one attempt came to: `sent` (2xx), `retry` (no answer, a timeout, 408, 429, 5xx; with the
 * receiver's Retry-After when it gave one) or `failed` (any other answer, a refused destination, a
 * bad URL: another attempt would not change it).
 */
export type AttemptOutcome =
  | { kind: 'sent'; status: number; response: string | null }
  | {
      kind: 'retry' | 'failed';
      status: number | null;
      response: string | null;
      error: { code: string; message: string };
      retryAfterMs?: number;
    };

export function outcomeOfAnswer(response: OutboundResponse): AttemptOutcome {
  const { status } = response;
  const kept = keptAnswer(response.data);
  if (status >= 200 && status < 300) return { kind: 'sent', status, response: kept };
  const error = { code: 'HTTP_STATUS', message: `the receiver answered ${status}` };
  if (status === 408 || status === 429 || status >= 500) {
    const retryAfter = response.headers['retry-after'];
    const retryAfterMs = parseRetryAfter(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter);
    return { kind: 'retry', status, response: kept, error, retryAfterMs };
  }
  if (status >= 300 && status < 400)
    error.message = `the receiver answered ${status} (redirects are not followed for webhooks)`;
  return { kind: 'failed', status, response: kept, error };
}

/** A request that got no answer: retried when the outbound client says another attempt may succeed. */
export function outcomeOfError(error: unknown): AttemptOutcome {
  const cause =
    error instanceof OutboundHttpError
      ? { code: error.code, message: error.message }
      : { code: 'REQUEST_FAILED', message: 'the request failed' };
  const retryable = error instanceof OutboundHttpError && error.retryable;
  return { kind: retryable ? 'retry' : 'failed', status: null, response: null, error: cause };
}

function keptAnswer(data: unknown): string | null {
  if (data === null || data === undefined || data === '') return null;
  const text = typeof data === 'string' ? data : JSON.stringify(data);
  return text.slice(0, KEPT_ANSWER_CHARS);
}
