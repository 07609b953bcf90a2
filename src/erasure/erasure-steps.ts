/** Whose data an erasure removes: an account and everything of it, or the records holding a field value. */
export type ErasureKind = 'user' | 'field';

/**
 * The steps of an erasure, in the order they run. The records go first (nothing new can be derived
 * from them after), the events about them before anything could take them up, the account last (its
 * e-mail is what the mail step matches). A step added later goes before `account`, so an erasure
 * stopped in an older version at its last step runs the new one (harmless, being repeatable) first. Each step is safe to repeat: a restart after a crash runs
 * the step it was in again, and that finds only what is left.
 */
export const ERASURE_STEPS = [
  'records',
  'events',
  'history',
  'webhooks',
  'runs',
  'mail',
  'idempotency',
  'imports',
  'account',
] as const;

export type ErasureStep = (typeof ERASURE_STEPS)[number];
