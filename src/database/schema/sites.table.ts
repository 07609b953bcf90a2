import { boolean, jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import { createdAt, primaryId, updatedAt } from './columns';

export const sites = pgTable('sites', {
  id: primaryId(),
  name: text('name').notNull(),
  /** Lower-cased host names without port; uniqueness across sites is enforced by the sites service. */
  domains: jsonb('domains').$type<string[]>().notNull().default([]),
  isActive: boolean('is_active').notNull().default(true),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});
