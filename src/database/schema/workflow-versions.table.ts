import { boolean, integer, jsonb, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { workflows } from './workflows.table';

/**
 * Every version of a workflow definition as it was saved (create, each update, the delete), kept
 * immutable: `GET /api/workflow/:workflowId/versions`. Written in the transaction of the change that
 * makes the version. Workflows stored before migration 0024 start with their version of then.
 */
export const workflowVersions = pgTable(
  'workflow_versions',
  {
    workflowId: uuid('workflow_id')
      .notNull()
      .references(() => workflows.id),
    version: integer('version').notNull(),
    name: text('name').notNull(),
    alias: text('alias'),
    description: text('description'),
    type: text('type').notNull(),
    config: jsonb('config').$type<Record<string, unknown>>().notNull(),
    permissions: jsonb('permissions').$type<{ roles: string[]; users: string[] }>().notNull(),
    tags: jsonb('tags').$type<string[]>().notNull(),
    siteId: uuid('site_id'),
    isActive: boolean('is_active').notNull(),
    /** The definition's author as of this version (see workflows.author_id). */
    authorId: uuid('author_id'),
    /** Who made this version (null for versions kept by migration 0024, whose maker is unknown). */
    savedBy: uuid('saved_by'),
    savedAt: timestamp('saved_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (table) => [primaryKey({ columns: [table.workflowId, table.version] })],
);
