import { Inject, Injectable } from '@nestjs/common';
import { HourlyPurge } from '../common/lifecycle/hourly-purge';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository';

/** Deletes sent and failed webhook deliveries (with their attempts) after WEBHOOK_DELIVERY_RETENTION_DAYS. */
@Injectable()
export class WebhookDeliveryRetention extends HourlyPurge {
  constructor(
    private readonly deliveries: WebhookDeliveriesRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    super('webhook deliveries past their retention');
  }

  purge(
    cutoff = new Date(Date.now() - this.config.webhookDeliveryRetentionDays * 86_400_000),
  ): Promise<number> {
    return this.counted(() => this.deliveries.purgeSettledBefore(cutoff));
  }
}
