import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { causeChain } from '../common/errors/cause-chain';
import { isDatabaseUnavailable } from '../common/errors/database-unavailable';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { DatabaseHealth } from '../database/database-health';
import { OutboundHttpService } from '../common/outbound-http';
import {
  KEPT_ANSWER_CHARS,
  outcomeOfAnswer,
  outcomeOfError,
  type AttemptOutcome,
} from './webhook-attempt-outcome';
import {
  WebhookDeliveriesRepository,
  type AttemptRecord,
  type ClaimedDelivery,
} from './webhook-deliveries.repository';
import { webhookHeaders } from './webhook-signature';
import { WebhookSubscriptionsRepository } from './webhook-subscriptions.repository';

/** The longest wait between two attempts of one delivery (also the cap of a receiver's Retry-After). */
export const MAX_BACKOFF_MS = 60 * 60_000;

/**
 * Sends the webhook outbox. Up to WEBHOOK_WORKERS deliveries at once per instance, each worker
 * claiming one due delivery at a time (`SKIP LOCKED`, a lease of WEBHOOK_LEASE_MS, longer than an
 * attempt's WEBHOOK_TIMEOUT_MS), so one slow receiver holds one worker, not the others. A worker
 * starts the next one when it found work, so an idle instance asks the database once per poll
 * (WEBHOOK_POLL_MS); `sendSoon` is the nudge after a fan-out. A delivery is marked sent only after a
 * 2xx; a claim that ran out writes nothing of its outcome (another instance sends it again, with the
 * same `webhook-id`). At shutdown, attempts in flight are abandoned: their deliveries are sent again
 * (after their retry wait, or their lease when nothing was written), as after a crash.
 */
@Injectable()
export class WebhookSender implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(WebhookSender.name);
  private readonly inFlight = new AbortController();
  private timer?: NodeJS.Timeout;
  private workers = 0;
  private again = false;
  private stopping = false;

  constructor(
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly subscriptions: WebhookSubscriptionsRepository,
    private readonly outbound: OutboundHttpService,
    private readonly databaseHealth: DatabaseHealth,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    if (this.config.webhookWorkers === 0) return;
    this.timer = setInterval(() => this.sendSoon(), this.config.webhookPollMs);
    this.timer.unref();
  }

  onModuleDestroy(): void {
    this.stopping = true;
    clearInterval(this.timer);
    this.inFlight.abort();
  }

  /** Looks for due deliveries now (a fan-out just queued some, a subscription was enabled again). */
  sendSoon(): void {
    if (this.stopping || this.config.webhookWorkers === 0) return;
    if (this.workers >= this.config.webhookWorkers) {
      this.again = true;
      return;
    }
    this.workers++;
    void this.work().finally(() => this.workers--);
  }

  /** One worker: claims and sends deliveries one at a time until none is due. */
  private async work(): Promise<void> {
    try {
      for (;;) {
        if (this.stopping) return;
        const delivery = await this.deliveries.claimNext(this.config.webhookLeaseMs);
        if (!delivery) {
          if (!this.again) return;
          this.again = false;
          continue;
        }
        // Another worker for whatever else is due, while this one waits for its receiver.
        this.sendSoon();
        await this.deliver(delivery);
      }
    } catch (error) {
      if (this.stopping) return;
      if (isDatabaseUnavailable(error)) this.databaseHealth.unavailable(error);
      else this.logger.warn(`webhook delivery failed: ${causeChain(error)}`);
    }
  }

  private async deliver(delivery: ClaimedDelivery): Promise<void> {
    const started = new Date();
    let outcome: AttemptOutcome;
    try {
      const response = await this.outbound.request({
        method: 'POST',
        url: delivery.url,
        headers: webhookHeaders(delivery.secrets, delivery.eventId, delivery.body, started),
        body: delivery.body,
        timeoutMs: this.config.webhookTimeoutMs,
        maxResponseBytes: KEPT_ANSWER_CHARS * 4,
        truncateResponse: true,
        followRedirects: false,
        signal: this.inFlight.signal,
      });
      outcome = outcomeOfAnswer(response);
    } catch (error) {
      outcome = outcomeOfError(error);
    }
    // Shutting down (as a crash would): the claim runs out and the delivery is sent again.
    if (this.stopping) return;
    const attempt: AttemptRecord = {
      at: started,
      status: outcome.status,
      durationMs: Date.now() - started.getTime(),
      error: outcome.kind === 'sent' ? null : outcome.error,
      response: outcome.response,
    };
    if (outcome.kind === 'sent') {
      if (await this.deliveries.markSent(delivery, attempt))
        await this.subscriptions.noteSuccess(delivery.subscriptionId);
      return;
    }
    await this.recordFailure(delivery, attempt, outcome);
  }

  private async recordFailure(
    delivery: ClaimedDelivery,
    attempt: AttemptRecord,
    outcome: Extract<AttemptOutcome, { kind: 'retry' | 'failed' }>,
  ): Promise<void> {
    const backoffMs = this.config.webhookRetryBaseMs * 2 ** (delivery.attempts - 1);
    const delayMs = Math.min(Math.max(backoffMs, outcome.retryAfterMs ?? 0), MAX_BACKOFF_MS);
    const retry = outcome.kind === 'retry' && delivery.ageMs + delayMs <= this.config.webhookRetryMaxMs;
    const ids = {
      webhookId: delivery.subscriptionId,
      deliveryId: delivery.id,
      eventType: delivery.eventType,
      attempt: delivery.attempts,
      code: outcome.error.code,
      status: outcome.status,
    };
    const where = `webhook ${delivery.subscriptionId}, delivery ${delivery.id} (${delivery.eventType})`;
    const settled = retry
      ? await this.deliveries.scheduleRetry(delivery, attempt, delayMs)
      : await this.deliveries.markFailed(delivery, attempt);
    if (!settled) return;
    this.logger.warn({
      msg: retry
        ? `${where}: attempt ${delivery.attempts} failed (${outcome.error.message}), next in ${delayMs} ms`
        : `${where}: attempt ${delivery.attempts} failed (${outcome.error.message}), given up`,
      ...ids,
      ...(retry ? { retryInMs: delayMs } : {}),
    });
    const reason = `its deliveries failed for ${this.config.webhookDisableAfterMs} ms without one success (last: ${outcome.error.message})`;
    if (
      await this.subscriptions.noteFailure(delivery.subscriptionId, this.config.webhookDisableAfterMs, reason)
    ) {
      this.logger.warn({
        msg: `webhook ${delivery.subscriptionId} disabled: ${reason}`,
        webhookId: delivery.subscriptionId,
      });
    }
  }
}
