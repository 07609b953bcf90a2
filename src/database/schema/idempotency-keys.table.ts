import { integer, jsonb, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { createdAt } from './columns';

/**
 * `Idempotency-Key` requests: the first request with a key claims it (`pending`), stores its
 * answer (`done`), and every later request with the same key, user and route gets that answer.
 * `route` is the method and a digest of the URL, `Prefer` and the request's site (idempotent-requests.ts).
 */
export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    userId: uuid('user_id').notNull(),
    route: text('route').notNull(),
    key: text('key').notNull(),
    bodyHash: text('body_hash').notNull(),
    state: text('state').notNull(),
    responseStatus: integer('response_status'),
    responseBody: jsonb('response_body'),
    createdAt: createdAt(),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (table) => [primaryKey({ columns: [table.userId, table.route, table.key] })],
);
