export const BACKOFFS = ['fixed', 'linear', 'exponential'] as const;
export type Backoff = (typeof BACKOFFS)[number];

export interface RetrySettings {
  enabled?: boolean;
  maxAttempts?: number;
  backoff?: Backoff;
  delayMs?: number;
  maxDelayMs?: number;
}

export interface RetryPolicy {
  maxAttempts: number;
  backoff: Backoff;
  delayMs: number;
  maxDelayMs: number;
}

export const RETRY_DEFAULTS: RetryPolicy = {
  maxAttempts: 3,
  backoff: 'exponential',
  delayMs: 1000,
  maxDelayMs: 30_000,
};

/** The policy of one step: its own `retry` over the workflow's; one attempt when neither is enabled. */
export function retryPolicyOf(
  workflow: RetrySettings | undefined,
  step: RetrySettings | undefined,
): RetryPolicy {
  const settings = step ? { ...workflow, ...step } : workflow;
  if (!settings?.enabled) return { ...RETRY_DEFAULTS, maxAttempts: 1 };
  return {
    maxAttempts: settings.maxAttempts ?? RETRY_DEFAULTS.maxAttempts,
    backoff: settings.backoff ?? RETRY_DEFAULTS.backoff,
    delayMs: settings.delayMs ?? RETRY_DEFAULTS.delayMs,
    maxDelayMs: settings.maxDelayMs ?? RETRY_DEFAULTS.maxDelayMs,
  };
}

/**
 * The wait before attempt `n` (1-based): 0 for the first; then `fixed` base, `linear` base·(n−1),
 * `exponential` base·4^(n−2) (0 / 1000 / 4000 ms at the default base), never more than `maxDelayMs`. A server's
 * `Retry-After` lengthens the wait, within the same cap.
 */
export function delayBeforeAttempt(policy: RetryPolicy, attempt: number, retryAfterMs?: number): number {
  if (attempt <= 1) return 0;
  const base = policy.delayMs;
  const computed =
    policy.backoff === 'fixed'
      ? base
      : policy.backoff === 'linear'
        ? base * (attempt - 1)
        : base * 4 ** (attempt - 2);
  return Math.min(Math.max(computed, retryAfterMs ?? 0), policy.maxDelayMs);
}
