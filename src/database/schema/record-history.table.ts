import { bigint, index, integer, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/**
 * The history of records, owned by the data module: one row per create, update, delete and restore,
 * written in the same statement as the change. Append-only but for an erasure (README "Erasure"),
 * which keeps the entries and drops their values; a record's purge from the trash leaves its rows
 * (so no foreign key to data_records).
 */
export const recordHistory = pgTable(
  'record_history',
  {
    /** Also the order of the entries: assigned while the changed record's row is locked. */
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    recordId: uuid('record_id').notNull(),
    configId: uuid('config_id').notNull(),
    siteId: uuid('site_id'),
    /** created, updated, deleted or restored. */
    action: text('action').notNull(),
    userId: uuid('user_id'),
    /** Through which route or workflow run (the request context's `origin`); null when unknown. */
    origin: jsonb('origin').$type<Record<string, unknown> | null>(),
    /** Per-field diff of `data`: `{field: {before, after}}`; empty for a delete or restore. */
    changes: jsonb('changes').$type<Record<string, { before?: unknown; after?: unknown }>>().notNull(),
    /** The record's configVersion after the change; null on entries written before form versions. */
    configVersion: integer('config_version'),
    at: timestamp('at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    /** When an erasure removed the entry's values (`changes` then keeps the field names only). */
    erasedAt: timestamp('erased_at', { withTimezone: true, mode: 'date' }),
  },
  (table) => [index('record_history_record_idx').on(table.recordId, table.id.desc())],
);
