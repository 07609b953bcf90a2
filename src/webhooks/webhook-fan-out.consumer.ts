import { RecordEventAttachments } from '../attachments/record-event-attachments';
import type { DomainEvent } from '../events/domain-event';
import { EventConsumer } from '../events/event-consumer';
import type { EventInterest } from '../events/event-interest';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository';
import { WebhookSender } from './webhook-sender.service';
import { WebhookSubscriptionsRepository } from './webhook-subscriptions.repository';

/** The body every delivery of an event sends, fixed here so every attempt signs the same bytes. */
export function webhookBody(event: DomainEvent): string {
  return JSON.stringify({ type: event.type, timestamp: event.occurredAt.toISOString(), data: event.data });
}

/**
 * Takes domain events into the webhook outbox: one delivery per event and matching enabled
 * subscription, one statement per batch (idempotent: a batch handed out again adds nothing), then
 * nudges the sender.
 */
@EventConsumer('webhooks')
export class WebhookFanOut {
  constructor(
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly sender: WebhookSender,
    private readonly subscriptions: WebhookSubscriptionsRepository,
    private readonly files: RecordEventAttachments,
  ) {}

  interests(): Promise<EventInterest[]> {
    return this.subscriptions.enabledInterests();
  }

  async consume(events: DomainEvent[]): Promise<void> {
    // A record's files go with it: their metadata and download URLs (README "Attachments").
    const shown = await this.files.withAttachments(events);
    const queued = await this.deliveries.fanOut(
      shown.map((event) => ({
        id: event.id,
        type: event.type,
        siteId: event.siteId,
        configId: event.configId,
        body: webhookBody(event),
      })),
    );
    if (queued > 0) this.sender.sendSoon();
  }
}
