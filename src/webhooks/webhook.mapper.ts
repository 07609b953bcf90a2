import type { EventType } from '../events/domain-event';
import type { WebhookAttemptDto, WebhookDeliveryDto } from './dto/webhook-delivery.dto';
import type { WebhookResponseDto } from './dto/webhook-subscription.dto';
import type { WebhookAttemptRow, WebhookDeliveryRow } from './webhook-deliveries.repository';
import type { WebhookSubscriptionRow } from './webhook-subscriptions.repository';

const iso = (date: Date | null) => date?.toISOString() ?? null;

/** A subscription as answers show it: never its secrets. */
export function toWebhookResponse(row: WebhookSubscriptionRow, now = new Date()): WebhookResponseDto {
  const graceRuns = row.previousSecretExpiresAt !== null && row.previousSecretExpiresAt > now;
  return {
    id: row.id,
    url: row.url,
    events: row.events as EventType[],
    configId: row.configId,
    siteId: row.siteId,
    description: row.description,
    enabled: row.enabled,
    disabledReason: row.disabledReason,
    disabledAt: iso(row.disabledAt),
    failingSince: iso(row.failingSince),
    previousSecretExpiresAt: graceRuns ? iso(row.previousSecretExpiresAt) : null,
    createdBy: row.createdBy,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export function toDeliveryResponse(
  row: WebhookDeliveryRow,
  attempts: WebhookAttemptRow[],
): WebhookDeliveryDto {
  return {
    id: row.id,
    eventId: row.eventId,
    eventType: row.eventType,
    state: row.state,
    attempts: row.attempts,
    nextAttemptAt: row.state === 'pending' ? row.availableAt.toISOString() : null,
    lastError: row.lastError ?? null,
    createdAt: row.createdAt.toISOString(),
    sentAt: iso(row.sentAt),
    redeliveryOf: row.redeliveryOf,
    attemptLog: attempts.map(toAttemptResponse),
  };
}

function toAttemptResponse(row: WebhookAttemptRow): WebhookAttemptDto {
  return {
    attempt: row.attempt,
    at: row.at.toISOString(),
    status: row.status,
    durationMs: row.durationMs,
    error: row.errorCode ? { code: row.errorCode, message: row.errorMessage ?? '' } : null,
    response: row.response,
  };
}
