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

/**
 * Webhook subscriptions (admin): a URL, the event types it wants, optionally one configuration and
 * one site, and its signing secret (`whsec_...`); during a rotation's grace period the previous
 * secret signs too.
 */
export const webhookSubscriptions = pgTable('webhook_subscriptions', {
  id: primaryId(),
  url: text('url').notNull(),
  events: text('events').array().notNull(),
  configId: uuid('config_id'),
  siteId: uuid('site_id'),
  description: text('description'),
  secret: text('secret').notNull(),
  previousSecret: text('previous_secret'),
  previousSecretExpiresAt: timestamp('previous_secret_expires_at', { withTimezone: true, mode: 'date' }),
  enabled: boolean('enabled').notNull().default(true),
  disabledReason: text('disabled_reason'),
  disabledAt: timestamp('disabled_at', { withTimezone: true, mode: 'date' }),
  /** The first failed attempt since the last success; null while deliveries succeed. */
  failingSince: timestamp('failing_since', { withTimezone: true, mode: 'date' }),
  createdBy: uuid('created_by'),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

/**
 * The webhook outbox: one row per event and subscription (written by the events consumer), or per
 * redelivery. `body` is frozen when the row is written, so every attempt signs the same bytes.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: primaryId(),
    subscriptionId: uuid('subscription_id')
      .notNull()
      .references(() => webhookSubscriptions.id, { onDelete: 'cascade' }),
    /** The domain event's id: the `webhook-id` header of every attempt and redelivery. */
    eventId: uuid('event_id').notNull(),
    eventType: text('event_type').notNull(),
    body: text('body').notNull(),
    /** `pending` (due at `availableAt`), `sent`, or `failed` (refused, or retried past the bound). */
    state: text('state').notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    availableAt: timestamp('available_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    lastError: jsonb('last_error').$type<{ code: string; message: string }>(),
    createdAt: createdAt(),
    sentAt: timestamp('sent_at', { withTimezone: true, mode: 'date' }),
    /** The delivery this one sends again (`POST .../redeliver`); null for the event's own delivery. */
    redeliveryOf: uuid('redelivery_of'),
  },
  (table) => [
    uniqueIndex('webhook_deliveries_event_uq')
      .on(table.subscriptionId, table.eventId)
      .where(sql`${table.redeliveryOf} is null`),
    index('webhook_deliveries_due_idx')
      .on(table.availableAt)
      .where(sql`${table.state} = 'pending'`),
    index('webhook_deliveries_subscription_idx').on(table.subscriptionId, table.createdAt),
  ],
);

/** Every attempt of a delivery: when, the answer's status (null without one), how long, the error and the answer's start. */
export const webhookAttempts = pgTable(
  'webhook_attempts',
  {
    id: primaryId(),
    deliveryId: uuid('delivery_id')
      .notNull()
      .references(() => webhookDeliveries.id, { onDelete: 'cascade' }),
    attempt: integer('attempt').notNull(),
    at: timestamp('at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    status: integer('status'),
    durationMs: integer('duration_ms').notNull(),
    errorCode: text('error_code'),
    errorMessage: text('error_message'),
    /** The first 1 KB of the answer's body. */
    response: text('response'),
  },
  (table) => [index('webhook_attempts_delivery_idx').on(table.deliveryId, table.attempt)],
);
