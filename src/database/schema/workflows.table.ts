import { boolean, index, integer, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { createdAt, primaryId, updatedAt } from './columns';
import { sites } from './sites.table';

export const workflows = pgTable(
  'workflows',
  {
    id: primaryId(),
    name: text('name').notNull(),
    alias: text('alias'),
    description: text('description'),
    type: text('type').notNull(),
    config: jsonb('config').$type<Record<string, unknown>>().notNull(),
    permissions: jsonb('permissions')
      .$type<{ roles: string[]; users: string[] }>()
      .notNull()
      .default({ roles: [], users: [] }),
    tags: jsonb('tags').$type<string[]>().notNull().default([]),
    siteId: uuid('site_id').references(() => sites.id),
    isActive: boolean('is_active').notNull().default(true),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (table) => [index('workflows_site_idx').on(table.siteId)],
);

export const workflowRuns = pgTable(
  'workflow_runs',
  {
    id: primaryId(),
    workflowId: uuid('workflow_id')
      .notNull()
      .references(() => workflows.id),
    userId: uuid('user_id'),
    siteId: uuid('site_id'),
    configId: uuid('config_id'),
    dataId: uuid('data_id'),
    status: text('status').notNull(),
    message: text('message'),
    steps: jsonb('steps').$type<unknown[]>().notNull().default([]),
    durationMs: integer('duration_ms').notNull().default(0),
    startedAt: timestamp('started_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    finishedAt: timestamp('finished_at', { withTimezone: true, mode: 'date' }),
    createdAt: createdAt(),
  },
  (table) => [
    index('workflow_runs_workflow_idx').on(table.workflowId, table.startedAt.desc()),
    index('workflow_runs_user_idx').on(table.userId, table.startedAt.desc()),
  ],
);
