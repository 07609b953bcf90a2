import { sql } from 'drizzle-orm';
import { boolean, index, pgTable, text, timestamp, uuid, uniqueIndex } from 'drizzle-orm/pg-core';
import { createdAt, primaryId, updatedAt } from './columns';
import { sites } from './sites.table';

export const users = pgTable(
  'users',
  {
    id: primaryId(),
    /** Stored lower-cased; unique across the whole service. */
    email: text('email').notNull(),
    name: text('name').notNull(),
    passwordHash: text('password_hash').notNull(),
    /** Role name (roles.name); names are stable identifiers of roles. */
    role: text('role').notNull().default('user'),
    siteId: uuid('site_id').references(() => sites.id),
    isActive: boolean('is_active').notNull().default(true),
    /** Tokens issued before this instant are rejected (password change, deactivation). */
    tokensValidAfter: timestamp('tokens_valid_after', { withTimezone: true, mode: 'date' })
      .notNull()
      .default(sql`'epoch'`),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (table) => [uniqueIndex('users_email_unique').on(table.email), index('users_role_idx').on(table.role)],
);
