import { index, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/** Token blacklist used when Redis is absent; rows are useless after `expires_at` and are purged. */
export const revokedTokens = pgTable(
  'revoked_tokens',
  {
    jti: text('jti').primaryKey(),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (table) => [index('revoked_tokens_expires_idx').on(table.expiresAt)],
);
