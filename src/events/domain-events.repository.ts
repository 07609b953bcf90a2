import { Inject, Injectable } from '@nestjs/common';
import { and, inArray, like, sql } from 'drizzle-orm';
import type { ChangeOrigin } from '../common/context/request-context';
import { DATABASE, type Database } from '../database/database.types';
import { rowsOf } from '../database/raw-rows';
import { domainEvents } from '../database/schema';
import { isEventType, type DomainEvent } from './domain-event';

/** An event as a claim took it, with the number of times it was claimed (this one included). */
export type ClaimedEvent = DomainEvent & { attempts: number };

// Drivers differ in what they parse for raw statements (node-postgres gives Dates and objects,
// PGlite may give strings), so both are accepted.
const json = (value: unknown) => (typeof value === 'string' ? JSON.parse(value) : value);
const date = (value: unknown) => (value instanceof Date ? value : new Date(String(value)));

/**
 * The events outbox. Any instance claims due events (`FOR UPDATE SKIP LOCKED`, oldest first); a claim
 * moves their due time one lease ahead, so events whose dispatcher died are claimed again after it.
 */
@Injectable()
export class DomainEventsRepository {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  /** Claims up to `limit` due events for `leaseMs`, in the order they were written. */
  async claimDue(limit: number, leaseMs: number): Promise<ClaimedEvent[]> {
    const result = await this.db.execute(sql`
      update ${domainEvents} e
      set attempts = e.attempts + 1, available_at = now() + ${`${leaseMs} milliseconds`}::interval
      from (
        select id from ${domainEvents} where available_at <= now()
        order by available_at, seq limit ${limit} for update skip locked
      ) due
      where e.id = due.id
      returning e.id, e.seq, e.type, e.site_id, e.config_id, e.actor_id, e.origin, e.data, e.occurred_at,
        e.attempts`);
    return rowsOf(result)
      .sort((a, b) => Number(a.seq) - Number(b.seq))
      .flatMap((row) => {
        const type = String(row.type);
        // A type this version does not know (written by a newer instance) waits for one that does.
        if (!isEventType(type)) return [];
        return [
          {
            id: String(row.id),
            type,
            occurredAt: date(row.occurred_at),
            siteId: (row.site_id as string | null) ?? null,
            configId: (row.config_id as string | null) ?? null,
            actorId: (row.actor_id as string | null) ?? null,
            origin: (json(row.origin) as ChangeOrigin | null) ?? null,
            data: json(row.data) as Record<string, unknown>,
            attempts: Number(row.attempts),
          },
        ];
      });
  }

  /** Every consumer took these: they leave the outbox. */
  async remove(ids: string[]): Promise<void> {
    if (ids.length > 0) await this.db.delete(domainEvents).where(inArray(domainEvents.id, ids));
  }

  /** Events not yet dispatched about one of these records (an erasure: their data holds the record); how many. */
  async deleteAboutRecords(recordIds: string[]): Promise<number> {
    if (recordIds.length === 0) return 0;
    const rows = await this.db
      .delete(domainEvents)
      .where(
        and(
          like(domainEvents.type, 'record.%'),
          sql`(${domainEvents.data} #>> '{record,_id}') = any(${sql.param(recordIds)}::text[])`,
        ),
      )
      .returning({ id: domainEvents.id });
    return rows.length;
  }

  /** A consumer failed on these: due again in `delayMs`. */
  async postpone(ids: string[], delayMs: number): Promise<void> {
    if (ids.length === 0) return;
    await this.db
      .update(domainEvents)
      .set({ availableAt: sql`now() + ${`${delayMs} milliseconds`}::interval` })
      .where(inArray(domainEvents.id, ids));
  }

  /** Events not yet taken by every consumer (metrics, tests). */
  async countPending(): Promise<number> {
    const [row] = rowsOf(await this.db.execute(sql`select count(*)::int as n from ${domainEvents}`));
    return Number(row?.n ?? 0);
  }
}
