import { AttachmentsModule } from '../attachments/attachments.module';
import { Module } from '@nestjs/common';
import { OutboundHttpModule } from '../common/outbound-http';
import { FormConfigsModule } from '../form-configs/form-configs.module';
import { SitesModule } from '../sites/sites.module';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository';
import { WebhookDeliveriesService } from './webhook-deliveries.service';
import { WebhookDeliveryRetention } from './webhook-delivery-retention';
import { WebhookFanOut } from './webhook-fan-out.consumer';
import { WebhookSender } from './webhook-sender.service';
import { WebhookSubscriptionsRepository } from './webhook-subscriptions.repository';
import { WebhooksController } from './webhooks.controller';
import { WebhooksService } from './webhooks.service';

/**
 * Signed webhooks (Standard Webhooks): admin subscriptions, the fan-out of domain events into the
 * webhook outbox, and its sender, which calls receivers through the guarded outbound client (common/outbound-http).
 */
@Module({
  imports: [OutboundHttpModule, FormConfigsModule, SitesModule, AttachmentsModule],
  controllers: [WebhooksController],
  providers: [
    WebhookSubscriptionsRepository,
    WebhookDeliveriesRepository,
    WebhooksService,
    WebhookDeliveriesService,
    WebhookSender,
    WebhookFanOut,
    WebhookDeliveryRetention,
  ],
  exports: [WebhookDeliveriesService],
})
export class WebhooksModule {}
