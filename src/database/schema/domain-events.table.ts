import {
  bigint,
  index,
  integer,
  json,
  jsonb,
  pgTable,
  text,
  timestamp,
  unique,
  uuid,
} from 'drizzle-orm/pg-core';
import { primaryId } from './columns';

/**
 * The outbox of domain events (a record created, updated, deleted or restored; a workflow run
 * finished), owned by the events module. A row is written by the same statement as the change it
 * reports, so no event exists for a change that rolled back and none is missing for one that
 * committed. The dispatcher hands each row to every event consumer (webhooks, workflow triggers) and
 * deletes it once all of them took it; consumers are idempotent on the event's id, so a row handed
 * out twice (a dispatcher died between the two) does nothing twice.
 */
export const domainEvents = pgTable(
  'domain_events',
  {
    /** The event's identity for consumers (a webhook's `webhook-id`, a triggered run's key). */
    id: primaryId(),
    /** The order the dispatcher takes events in. */
    seq: bigint('seq', { mode: 'number' }).notNull().generatedAlwaysAsIdentity(),
    type: text('type').notNull(),
    siteId: uuid('site_id'),
    configId: uuid('config_id'),
    /** The user who caused the event (the run's user for a run's end). */
    actorId: uuid('actor_id'),
    /** Through which route or workflow run (the request context's `origin`). */
    origin: jsonb('origin').$type<Record<string, unknown> | null>(),
    /** The event's public `data`, as `json` (not `jsonb`), so a record's fields keep their order. */
    data: json('data').$type<Record<string, unknown>>().notNull(),
    occurredAt: timestamp('occurred_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    /** Due for (another) dispatch at; a claim moves it one lease ahead. */
    availableAt: timestamp('available_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    attempts: integer('attempts').notNull().default(0),
  },
  (table) => [index('domain_events_due_idx').on(table.availableAt, table.seq)],
);

/**
 * Which events anybody takes: a type, and the configuration it is limited to (null: any). A change
 * writes its event only when a row here wants it, so an installation without webhooks or triggers
 * writes none. A consumer declares a row before the subscription or trigger that needs it is
 * stored; the dispatcher's reconciliation removes rows nobody wants once they are older than
 * EVENTS_INTEREST_GRACE_MS, so a declaration racing a reconciliation is never lost.
 */
export const domainEventInterests = pgTable(
  'domain_event_interests',
  {
    type: text('type').notNull(),
    configId: uuid('config_id'),
    declaredAt: timestamp('declared_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (table) => [unique('domain_event_interests_key').on(table.type, table.configId).nullsNotDistinct()],
);
