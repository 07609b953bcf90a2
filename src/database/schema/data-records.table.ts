import { sql } from 'drizzle-orm';
import {
  boolean,
  index,
  integer,
  jsonb,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import { createdAt, primaryId, updatedAt } from './columns';
import { formConfigs } from './form-configs.table';
import { sites } from './sites.table';

export const dataRecords = pgTable(
  'data_records',
  {
    id: primaryId(),
    configId: uuid('config_id')
      .notNull()
      .references(() => formConfigs.id),
    userId: uuid('user_id'),
    siteId: uuid('site_id').references(() => sites.id),
    data: jsonb('data').$type<Record<string, unknown>>().notNull(),
    /** The keys of `data` in the order they were submitted (jsonb keeps its own order); null on older rows. */
    dataKeys: text('data_keys').array(),
    computedResults: jsonb('computed_results').$type<Record<string, unknown> | null>(),
    workflow: jsonb('workflow').$type<unknown[]>().notNull().default([]),
    /** Set by a workflow's save step (`run:<runId>:<step>`): a replayed step finds its record instead of saving twice. */
    idempotencyKey: text('idempotency_key'),
    isActive: boolean('is_active').notNull().default(true),
    /**
     * When the record went to the trash (is_active false): restorable until RECORD_TRASH_DAYS after
     * this, then purged. Null while active.
     */
    deletedAt: timestamp('deleted_at', { withTimezone: true, mode: 'date' }),
    /**
     * Rises by one with every change (update, delete, restore), each of which writes one history
     * entry; the record's ETag. The workflow log a run appends is not a change of the record.
     */
    version: integer('version').notNull().default(1),
    /**
     * The configuration version the record was last validated against (create and every edit move
     * it to the current one). The default only serves bulk loads that bypass the service (tests,
     * benches); records stored before form versions got their configuration's version then.
     */
    configVersion: integer('config_version').notNull().default(1),
    /**
     * A draft (README "Drafts"): saved with its types checked but not its required fields, rules or
     * computed values; seen only by its owner and admins, and counted nowhere (save limit, lists,
     * export, statistics) until it is submitted. `is_active` stays the trash flag for drafts too.
     */
    isDraft: boolean('is_draft').notNull().default(false),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (table) => [
    // Submitted records only: lists, counts and the save limit read them without visiting drafts.
    index('data_records_config_created_idx')
      .on(table.configId, table.createdAt.desc())
      .where(sql`${table.isActive} and not ${table.isDraft}`),
    index('data_records_config_user_idx')
      .on(table.configId, table.userId)
      .where(sql`${table.isActive} and not ${table.isDraft}`),
    // Drafts: listed per configuration and owner, moved to the trash by age.
    index('data_records_drafts_idx')
      .on(table.configId, table.userId)
      .where(sql`${table.isActive} and ${table.isDraft}`),
    index('data_records_draft_age_idx')
      .on(table.updatedAt)
      .where(sql`${table.isActive} and ${table.isDraft}`),
    // The trash: listed per configuration, purged by age; only inactive rows are indexed.
    index('data_records_trash_idx')
      .on(table.configId, table.deletedAt)
      .where(sql`not ${table.isActive}`),
    index('data_records_data_gin_idx').using('gin', sql`${table.data} jsonb_path_ops`),
    uniqueIndex('data_records_idempotency_key_idx')
      .on(table.idempotencyKey)
      .where(sql`${table.idempotencyKey} is not null`),
  ],
);
