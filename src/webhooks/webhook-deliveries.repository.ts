import { Inject, Injectable } from '@nestjs/common';
import { and, asc, count, desc, eq, inArray, sql, type SQL } from 'drizzle-orm';
import { DATABASE, type Database } from '../database/database.types';
import { rowsOf } from '../database/raw-rows';
import { webhookAttempts, webhookDeliveries, webhookSubscriptions } from '../database/schema';

export type WebhookDeliveryRow = typeof webhookDeliveries.$inferSelect;
export type WebhookAttemptRow = typeof webhookAttempts.$inferSelect;

/** An event as the fan-out writes it: what the subscriptions match on, and the frozen body. */
export interface FanOutEvent {
  id: string;
  type: string;
  siteId: string | null;
  configId: string | null;
  body: string;
}

/** A claimed delivery with what sending it needs: its subscription's URL and signing secrets. */
export interface ClaimedDelivery {
  id: string;
  subscriptionId: string;
  eventId: string;
  eventType: string;
  body: string;
  /** This claim's attempt (1 for the first). */
  attempts: number;
  /** Since the delivery was queued (the retry bound). */
  ageMs: number;
  url: string;
  /** The current secret, then the previous one while its grace period runs. */
  secrets: string[];
}

/** One attempt's outcome as it is stored. */
export interface AttemptRecord {
  /** When the attempt started. */
  at: Date;
  status: number | null;
  durationMs: number;
  error: { code: string; message: string } | null;
  response: string | null;
}

type Claim = Pick<ClaimedDelivery, 'id' | 'attempts'>;

const ms = (value: number) => sql`${`${value} milliseconds`}::interval`;

/**
 * The webhook outbox and its attempts. Any instance claims one due delivery at a time (`FOR UPDATE
 * SKIP LOCKED`) of an enabled subscription; a claim moves its due time one lease ahead, so a delivery
 * whose sender died is claimed again after it. An attempt's outcome is written only while the claim
 * holds (the delivery still pending at that attempt), together with the attempt's row.
 */
@Injectable()
export class WebhookDeliveriesRepository {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  /**
   * One delivery per event and enabled subscription that wants it (its type listed, its
   * configuration and site unset or equal), in one statement; an event handed out again adds nothing.
   */
  async fanOut(events: FanOutEvent[]): Promise<number> {
    if (events.length === 0) return 0;
    const rows = events.map((e) => ({
      id: e.id,
      type: e.type,
      site_id: e.siteId,
      config_id: e.configId,
      body: e.body,
    }));
    const result = await this.db.execute(sql`
      insert into ${webhookDeliveries} (subscription_id, event_id, event_type, body)
      select s.id, e.id, e.type, e.body
      from json_to_recordset(${JSON.stringify(rows)}::json)
        as e(id uuid, type text, site_id uuid, config_id uuid, body text)
      join ${webhookSubscriptions} s on s.enabled and e.type = any(s.events)
        and (s.config_id is null or s.config_id = e.config_id)
        and (s.site_id is null or s.site_id = e.site_id)
      on conflict (subscription_id, event_id) where redelivery_of is null do nothing
      returning id`);
    return rowsOf(result).length;
  }

  /** Claims the due delivery waiting longest (of an enabled subscription) for `leaseMs`, or null. */
  async claimNext(leaseMs: number): Promise<ClaimedDelivery | null> {
    const result = await this.db.execute(sql`
      update ${webhookDeliveries} d
      set attempts = d.attempts + 1, available_at = now() + ${ms(leaseMs)}
      from (
        select d2.id, s.url, s.secret,
          case when s.previous_secret_expires_at > now() then s.previous_secret end as previous_secret
        from ${webhookDeliveries} d2
        join ${webhookSubscriptions} s on s.id = d2.subscription_id
        where d2.state = 'pending' and d2.available_at <= now() and s.enabled
        order by d2.available_at
        limit 1
        for update of d2 skip locked
      ) due
      where d.id = due.id
      returning d.id, d.subscription_id, d.event_id, d.event_type, d.body, d.attempts,
        (extract(epoch from now() - d.created_at) * 1000)::bigint as age_ms,
        due.url, due.secret, due.previous_secret`);
    const [row] = rowsOf(result);
    if (!row) return null;
    return {
      id: String(row.id),
      subscriptionId: String(row.subscription_id),
      eventId: String(row.event_id),
      eventType: String(row.event_type),
      body: String(row.body),
      attempts: Number(row.attempts),
      ageMs: Number(row.age_ms),
      url: String(row.url),
      secrets: [row.secret, row.previous_secret].filter(
        (secret): secret is string => typeof secret === 'string',
      ),
    };
  }

  async markSent(claim: Claim, attempt: AttemptRecord): Promise<boolean> {
    return this.settle(claim, attempt, sql`state = 'sent', sent_at = now(), last_error = null`);
  }

  async scheduleRetry(claim: Claim, attempt: AttemptRecord, delayMs: number): Promise<boolean> {
    return this.settle(
      claim,
      attempt,
      sql`last_error = ${lastError(attempt)}::jsonb, available_at = now() + ${ms(delayMs)}`,
    );
  }

  async markFailed(claim: Claim, attempt: AttemptRecord): Promise<boolean> {
    return this.settle(claim, attempt, sql`state = 'failed', last_error = ${lastError(attempt)}::jsonb`);
  }

  /** The outcome and the attempt's row in one statement, only while the claim holds; false when it ran out. */
  private async settle(claim: Claim, attempt: AttemptRecord, set: SQL): Promise<boolean> {
    const result = await this.db.execute(sql`
      with settled as (
        update ${webhookDeliveries} set ${set}
        where id = ${claim.id}::uuid and state = 'pending' and attempts = ${claim.attempts}
        returning id
      )
      insert into ${webhookAttempts} (delivery_id, attempt, at, status, duration_ms, error_code, error_message, response)
      select id, ${claim.attempts}, ${attempt.at.toISOString()}::timestamptz, ${attempt.status}::int, ${attempt.durationMs}::int, ${attempt.error?.code ?? null}::text,
        ${attempt.error?.message ?? null}::text, ${attempt.response}::text
      from settled
      returning delivery_id`);
    return rowsOf(result).length > 0;
  }

  /** The pending deliveries of a subscription are due at once (it was enabled again). */
  async resume(subscriptionId: string): Promise<void> {
    await this.db
      .update(webhookDeliveries)
      .set({ availableAt: sql`now()` })
      .where(
        and(eq(webhookDeliveries.subscriptionId, subscriptionId), eq(webhookDeliveries.state, 'pending')),
      );
  }

  /** A page of a subscription's deliveries, newest first, and how many it has. */
  async pageOf(
    subscriptionId: string,
    page: number,
    limit: number,
  ): Promise<{ rows: WebhookDeliveryRow[]; total: number }> {
    const where = eq(webhookDeliveries.subscriptionId, subscriptionId);
    const [rows, [{ total }]] = await Promise.all([
      this.db
        .select()
        .from(webhookDeliveries)
        .where(where)
        .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
        .limit(limit)
        .offset((page - 1) * limit),
      this.db.select({ total: count() }).from(webhookDeliveries).where(where),
    ]);
    return { rows, total: Number(total) };
  }

  async find(subscriptionId: string, deliveryId: string): Promise<WebhookDeliveryRow | null> {
    const [row] = await this.db
      .select()
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.subscriptionId, subscriptionId)))
      .limit(1);
    return row ?? null;
  }

  /** The attempts of the given deliveries, oldest first. */
  async attemptsOf(deliveryIds: string[]): Promise<WebhookAttemptRow[]> {
    if (deliveryIds.length === 0) return [];
    return this.db
      .select()
      .from(webhookAttempts)
      .where(inArray(webhookAttempts.deliveryId, deliveryIds))
      .orderBy(asc(webhookAttempts.attempt));
  }

  /** A new delivery of the same event and body, due now. */
  async queueRedelivery(of: WebhookDeliveryRow): Promise<WebhookDeliveryRow> {
    const [row] = await this.db
      .insert(webhookDeliveries)
      .values({
        subscriptionId: of.subscriptionId,
        eventId: of.eventId,
        eventType: of.eventType,
        body: of.body,
        redeliveryOf: of.id,
      })
      .returning();
    return row;
  }

  /**
   * Deletes every delivery whose event is about one of these records (its frozen body holds the
   * record), whatever its state: a pending one is never sent, a sent one's copy goes; its attempts
   * go with it. An attempt in flight writes nothing afterwards (its claim finds no row). How many.
   */
  async deleteAboutRecords(recordIds: string[]): Promise<number> {
    if (recordIds.length === 0) return 0;
    const result = await this.db.execute(sql`
      delete from ${webhookDeliveries}
      where event_type like 'record.%'
        and (body::jsonb #>> '{data,record,_id}') = any(${sql.param(recordIds)}::text[])
      returning id`);
    return rowsOf(result).length;
  }

  /**
   * Deletes sent and failed deliveries queued before `cutoff` (their attempts go with them), a batch
   * at a time, skipping rows another instance is deleting; how many went.
   */
  async purgeSettledBefore(cutoff: Date): Promise<number> {
    let removed = 0;
    for (;;) {
      const result = await this.db.execute(sql`
        delete from ${webhookDeliveries} where id in (
          select id from ${webhookDeliveries}
          where state <> 'pending' and created_at < ${cutoff.toISOString()}::timestamptz
          limit 1000 for update skip locked
        ) returning id`);
      const batch = rowsOf(result).length;
      removed += batch;
      if (batch < 1000) return removed;
    }
  }
}

function lastError(attempt: AttemptRecord): string | null {
  return attempt.error ? JSON.stringify(attempt.error) : null;
}
