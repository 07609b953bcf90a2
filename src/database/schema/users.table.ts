import { boolean, index, integer, pgTable, text, uuid, uniqueIndex } from 'drizzle-orm/pg-core';
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
    /** Embedded in every token as `ver`; raising it revokes every token issued before (password change). */
    tokenVersion: integer('token_version').notNull().default(0),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (table) => [uniqueIndex('users_email_unique').on(table.email), index('users_role_idx').on(table.role)],
);
