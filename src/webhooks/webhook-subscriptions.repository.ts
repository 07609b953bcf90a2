import { Inject, Injectable } from '@nestjs/common';
import { and, desc, eq, isNotNull, lte, sql } from 'drizzle-orm';
import { DATABASE, type Database } from '../database/database.types';
import { webhookSubscriptions } from '../database/schema';
import { isEventType } from '../events/domain-event';
import type { EventInterest } from '../events/event-interest';

export type WebhookSubscriptionRow = typeof webhookSubscriptions.$inferSelect;
export type NewWebhookSubscription = Pick<
  typeof webhookSubscriptions.$inferInsert,
  'url' | 'events' | 'configId' | 'siteId' | 'description' | 'secret' | 'enabled' | 'createdBy'
>;
export type WebhookSubscriptionChanges = Partial<
  Pick<WebhookSubscriptionRow, 'url' | 'events' | 'configId' | 'siteId' | 'description'>
>;

const ms = (value: number) => sql`${`${value} milliseconds`}::interval`;

@Injectable()
export class WebhookSubscriptionsRepository {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  async insert(subscription: NewWebhookSubscription): Promise<WebhookSubscriptionRow> {
    const [row] = await this.db.insert(webhookSubscriptions).values(subscription).returning();
    return row;
  }

  /** The events the enabled subscriptions take (the webhooks' event interests). */
  async enabledInterests(): Promise<EventInterest[]> {
    const rows = await this.db
      .selectDistinct({ events: webhookSubscriptions.events, configId: webhookSubscriptions.configId })
      .from(webhookSubscriptions)
      .where(eq(webhookSubscriptions.enabled, true));
    return rows.flatMap((row) =>
      row.events.filter(isEventType).map((type) => ({ type, configId: row.configId ?? null })),
    );
  }

  /** Newest first. */
  async list(): Promise<WebhookSubscriptionRow[]> {
    return this.db
      .select()
      .from(webhookSubscriptions)
      .orderBy(desc(webhookSubscriptions.createdAt), desc(webhookSubscriptions.id));
  }

  async find(id: string): Promise<WebhookSubscriptionRow | null> {
    const [row] = await this.db
      .select()
      .from(webhookSubscriptions)
      .where(eq(webhookSubscriptions.id, id))
      .limit(1);
    return row ?? null;
  }

  async update(id: string, changes: WebhookSubscriptionChanges): Promise<WebhookSubscriptionRow | null> {
    const [row] = await this.db
      .update(webhookSubscriptions)
      .set({ ...changes, updatedAt: sql`now()` })
      .where(eq(webhookSubscriptions.id, id))
      .returning();
    return row ?? null;
  }

  /** Enabling forgets the failure streak and the reason; disabling (by an admin) states that as the reason. */
  async setEnabled(id: string, enabled: boolean): Promise<void> {
    await this.db
      .update(webhookSubscriptions)
      .set(
        enabled
          ? { enabled, disabledReason: null, disabledAt: null, failingSince: null, updatedAt: sql`now()` }
          : {
              enabled,
              disabledReason: 'disabled by an admin',
              disabledAt: sql`now()`,
              updatedAt: sql`now()`,
            },
      )
      .where(and(eq(webhookSubscriptions.id, id), eq(webhookSubscriptions.enabled, !enabled)));
  }

  /** Deletes the subscription (and, by cascade, its deliveries and their attempts); false when unknown. */
  async delete(id: string): Promise<boolean> {
    const rows = await this.db
      .delete(webhookSubscriptions)
      .where(eq(webhookSubscriptions.id, id))
      .returning({ id: webhookSubscriptions.id });
    return rows.length > 0;
  }

  /** A new secret; the current one keeps signing until `graceMs` from now. */
  async rotateSecret(id: string, secret: string, graceMs: number): Promise<WebhookSubscriptionRow | null> {
    const [row] = await this.db
      .update(webhookSubscriptions)
      .set({
        secret,
        previousSecret: sql`${webhookSubscriptions.secret}`,
        previousSecretExpiresAt: sql`now() + ${ms(graceMs)}`,
        updatedAt: sql`now()`,
      })
      .where(eq(webhookSubscriptions.id, id))
      .returning();
    return row ?? null;
  }

  /** A delivery of the subscription was accepted: it is not failing. */
  async noteSuccess(id: string): Promise<void> {
    await this.db
      .update(webhookSubscriptions)
      .set({ failingSince: null })
      .where(and(eq(webhookSubscriptions.id, id), isNotNull(webhookSubscriptions.failingSince)));
  }

  /**
   * An attempt failed: the failure streak starts now unless it runs already. Disables the
   * subscription when the streak is `disableAfterMs` old; true when this call disabled it.
   */
  async noteFailure(id: string, disableAfterMs: number, reason: string): Promise<boolean> {
    await this.db
      .update(webhookSubscriptions)
      .set({ failingSince: sql`coalesce(${webhookSubscriptions.failingSince}, now())` })
      .where(eq(webhookSubscriptions.id, id));
    const disabled = await this.db
      .update(webhookSubscriptions)
      .set({ enabled: false, disabledReason: reason, disabledAt: sql`now()`, updatedAt: sql`now()` })
      .where(
        and(
          eq(webhookSubscriptions.id, id),
          eq(webhookSubscriptions.enabled, true),
          lte(webhookSubscriptions.failingSince, sql`now() - ${ms(disableAfterMs)}`),
        ),
      )
      .returning({ id: webhookSubscriptions.id });
    return disabled.length > 0;
  }
}
