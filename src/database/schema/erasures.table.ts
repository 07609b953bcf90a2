import { index, integer, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { createdAt, primaryId } from './columns';

/**
 * Erasures of a person's data (README "Erasure"), owned by the erasure module: the operation (the
 * ids matched when it was accepted, the next step, a lease so another instance finishes it) and,
 * once done, its audit entry (who asked, whom it concerned, how many of each kind went, when). It
 * never holds an erased value: a field-value subject is kept as its form and field and a digest.
 */
export const erasures = pgTable(
  'erasures',
  {
    id: primaryId(),
    /** `user` (an account and everything of it) or `field` (the records of a form whose field holds a value). */
    kind: text('kind').notNull(),
    /** `{userId}` or `{configId, field}`. */
    subject: jsonb('subject').$type<Record<string, string>>().notNull(),
    /** Recognises a repeat of the same request: `user:<id>`, or `field:` and a SHA-256 of form, field and value. */
    subjectKey: text('subject_key').notNull(),
    /** `running` until every step was done, then `done`. */
    status: text('status').notNull().default('running'),
    /** The index of the first step not done yet (ERASURE_STEPS). */
    nextStep: integer('next_step').notNull().default(0),
    /** The records and runs matched when the erasure was accepted. */
    recordIds: jsonb('record_ids').$type<string[]>().notNull(),
    runIds: jsonb('run_ids').$type<string[]>().notNull(),
    /** Per kind, how many went: `{records: 2, historyEntries: 5, ...}`. */
    counts: jsonb('counts').$type<Record<string, number>>().notNull().default({}),
    requestedBy: uuid('requested_by').notNull(),
    /** The instance working through it, until when; any instance takes over one whose lease expired. */
    leaseOwner: text('lease_owner'),
    leaseUntil: timestamp('lease_until', { withTimezone: true, mode: 'date' }),
    createdAt: createdAt(),
    finishedAt: timestamp('finished_at', { withTimezone: true, mode: 'date' }),
  },
  (table) => [
    index('erasures_subject_idx').on(table.subjectKey, table.createdAt.desc()),
    index('erasures_created_idx').on(table.createdAt.desc()),
  ],
);
