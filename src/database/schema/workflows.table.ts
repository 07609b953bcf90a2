import { sql } from 'drizzle-orm';
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
    /** Rises by one at every update; a run keeps the version (and a copy of the definition) it ran with. */
    version: integer('version').notNull().default(1),
    /**
     * Who last saved the definition (create, or an update with `config`): a trigger with
     * `runAs: "author"` runs as them. Null for definitions saved before it was kept.
     */
    authorId: uuid('author_id'),
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
    /** What the run was started with: `{configId, data}`, the caller and the mode; never changes. */
    request: jsonb('request').$type<Record<string, unknown>>(),
    /** The checkpoint: the scope after the last finished step, held mail, a pending retry. */
    checkpoint: jsonb('checkpoint').$type<Record<string, unknown>>(),
    /** The index of the first step not finished yet. */
    nextStep: integer('next_step').notNull().default(0),
    /** The step in flight when the checkpoint was written (null between steps). */
    stepInFlight: integer('step_in_flight'),
    /** When a queued run may be taken (a retry waits here instead of sleeping). */
    availableAt: timestamp('available_at', { withTimezone: true, mode: 'date' }),
    /** Which process runs it, until when; an expired lease means its process died. */
    leaseOwner: text('lease_owner'),
    leaseUntil: timestamp('lease_until', { withTimezone: true, mode: 'date' }),
    cancelRequested: boolean('cancel_requested').notNull().default(false),
    /** How often the run was claimed from the queue; a run that fails to run every time ends after a bound. */
    claims: integer('claims').notNull().default(0),
    /** The definition the run runs with (a copy: it resumes and is re-run with it after the workflow changed). */
    definition: jsonb('definition').$type<Record<string, unknown>>(),
    definitionVersion: integer('definition_version'),
    /** The run this one re-runs (POST /api/workflow/runs/:runId/rerun). */
    rerunOf: uuid('rerun_of'),
    /** When an erasure scrubbed the run's input, results and step log (README "Erasure"). */
    erasedAt: timestamp('erased_at', { withTimezone: true, mode: 'date' }),
    /**
     * A triggered run: the root event of its causal chain (the change made outside any triggered
     * run), for the bound on the runs one root event may cause. Null for runs started by a request.
     */
    triggerRoot: uuid('trigger_root'),
  },
  (table) => [
    index('workflow_runs_workflow_idx').on(table.workflowId, table.startedAt.desc()),
    index('workflow_runs_user_idx').on(table.userId, table.startedAt.desc()),
    index('workflow_runs_queue_idx')
      .on(table.availableAt)
      .where(sql`${table.status} in ('queued', 'running', 'waiting')`),
    index('workflow_runs_user_active_idx')
      .on(table.userId)
      .where(sql`${table.status} in ('queued', 'running')`),
    index('workflow_runs_trigger_root_idx')
      .on(table.triggerRoot)
      .where(sql`${table.triggerRoot} is not null`),
    // GET /api/workflow/runs for an admin: every run, newest first, a page at a time.
    index('workflow_runs_started_idx').on(table.startedAt.desc(), table.id.desc()),
  ],
);

/**
 * Bulk operations on a workflow's runs (cancel, re-run): what was asked, how far it got. Processed
 * in the background by the instance that accepted it; see README "Operating runs".
 */
export const workflowOperations = pgTable('workflow_operations', {
  id: primaryId(),
  workflowId: uuid('workflow_id')
    .notNull()
    .references(() => workflows.id),
  kind: text('kind').notNull(),
  /** `running` until every matched run was handled, then `done`. */
  status: text('status').notNull().default('running'),
  /** The filter and options as the request gave them. */
  request: jsonb('request').$type<Record<string, unknown>>().notNull(),
  /** The ids the filter matched when the operation was accepted. */
  runIds: jsonb('run_ids').$type<string[]>().notNull(),
  matched: integer('matched').notNull(),
  done: integer('done').notNull().default(0),
  failed: integer('failed').notNull().default(0),
  /** Per failed run, its code: `[{runId, code}]`. */
  failures: jsonb('failures').$type<{ runId: string; code: string }[]>().notNull().default([]),
  userId: uuid('user_id'),
  /** The instance processing it, until when; any instance takes over an operation whose lease expired. */
  leaseOwner: text('lease_owner'),
  leaseUntil: timestamp('lease_until', { withTimezone: true, mode: 'date' }),
  createdAt: createdAt(),
  finishedAt: timestamp('finished_at', { withTimezone: true, mode: 'date' }),
});
