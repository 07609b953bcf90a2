import { Injectable } from '@nestjs/common';
import { requireAdmin, type RequestContext } from '../common/context/request-context';
import { AppError } from '../common/errors/app-error';
import type { ShortPageQueryDto } from '../common/http/short-page-query.dto';
import { isUuid } from '../common/validation/is-uuid';
import type { WebhookDeliveryDto, WebhookDeliveryPageDto } from './dto/webhook-delivery.dto';
import { WebhookDeliveriesRepository, type WebhookDeliveryRow } from './webhook-deliveries.repository';
import { WebhookSender } from './webhook-sender.service';
import { toDeliveryResponse } from './webhook.mapper';
import { WebhooksService } from './webhooks.service';

/** A subscription's deliveries (admins only): their attempts and answers, and sending one again. */
@Injectable()
export class WebhookDeliveriesService {
  constructor(
    private readonly webhooks: WebhooksService,
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly sender: WebhookSender,
  ) {}

  async list(
    ctx: RequestContext,
    webhookId: string,
    query: ShortPageQueryDto,
  ): Promise<WebhookDeliveryPageDto> {
    requireAdmin(ctx);
    await this.webhooks.require(webhookId);
    const page = query.page ?? 1;
    const limit = query.limit ?? 20;
    const { rows, total } = await this.deliveries.pageOf(webhookId, page, limit);
    return { data: await this.withAttempts(rows), total, page, pages: Math.ceil(total / limit) };
  }

  /**
   * An erasure's (the erasure module, admin-checked there): the deliveries about these records
   * leave the outbox, sent or not; how many.
   */
  eraseAboutRecords(recordIds: string[]): Promise<number> {
    return this.deliveries.deleteAboutRecords(recordIds);
  }

  /** Queues a new delivery of the same event and body (the same `webhook-id`), sent at once. */
  async redeliver(ctx: RequestContext, webhookId: string, deliveryId: string): Promise<WebhookDeliveryDto> {
    requireAdmin(ctx);
    await this.webhooks.require(webhookId);
    const original = isUuid(deliveryId) ? await this.deliveries.find(webhookId, deliveryId) : null;
    if (!original) throw new AppError('WEBHOOK_DELIVERY_NOT_FOUND');
    const queued = await this.deliveries.queueRedelivery(original);
    this.sender.sendSoon();
    return toDeliveryResponse(queued, []);
  }

  private async withAttempts(rows: WebhookDeliveryRow[]): Promise<WebhookDeliveryDto[]> {
    const attempts = await this.deliveries.attemptsOf(rows.map((row) => row.id));
    return rows.map((row) =>
      toDeliveryResponse(
        row,
        attempts.filter((attempt) => attempt.deliveryId === row.id),
      ),
    );
  }
}
