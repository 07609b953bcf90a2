import { sql } from 'drizzle-orm';
import { index, integer, jsonb, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { createdAt } from './columns';
import { workflowRuns } from './workflows.table';

/**
 * The outbox of workflow runs: one row per effect a run committed to (a mail, ...), written in the
 * run's own write and sent afterwards by whichever instance claims it. Keyed by run, step and the
 * effect's index in its step, so a resend after a crash carries the same identity.
 */
export const workflowEffects = pgTable(
  'workflow_effects',
  {
    runId: uuid('run_id')
      .notNull()
      .references(() => workflowRuns.id, { onDelete: 'cascade' }),
    stepIndex: integer('step_index').notNull(),
    effectIndex: integer('effect_index').notNull(),
    stepName: text('step_name').notNull(),
    kind: text('kind').notNull(),
    payload: jsonb('payload').$type<Record<string, unknown>>().notNull(),
    /** `pending` (due at `availableAt`), `sent`, or `failed` (refused, or retried past the bound). */
    state: text('state').notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    lastError: jsonb('last_error').$type<{ code: string; message: string }>(),
    availableAt: timestamp('available_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    createdAt: createdAt(),
    sentAt: timestamp('sent_at', { withTimezone: true, mode: 'date' }),
  },
  (table) => [
    primaryKey({ name: 'workflow_effects_pk', columns: [table.runId, table.stepIndex, table.effectIndex] }),
    index('workflow_effects_due_idx')
      .on(table.availableAt)
      .where(sql`${table.state} = 'pending'`),
  ],
);
