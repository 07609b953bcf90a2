import { Inject, Injectable, Logger } from '@nestjs/common';
import { requireAdmin, requireUser, type RequestContext } from '../common/context/request-context';
import { AppError, type FieldError } from '../common/errors/app-error';
import { isUuid } from '../common/validation/is-uuid';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { isEventType } from '../events/domain-event';
import type { EventInterest } from '../events/event-interest';
import { EventInterests } from '../events/event-interests.service';
import { FormConfigsService } from '../form-configs/form-configs.service';
import { SitesService } from '../sites/sites.service';
import type {
  CreatedWebhookDto,
  CreateWebhookDto,
  RotatedSecretDto,
  UpdateWebhookDto,
  WebhookListDto,
  WebhookResponseDto,
} from './dto/webhook-subscription.dto';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository';
import { WebhookSender } from './webhook-sender.service';
import { newWebhookSecret } from './webhook-signature';
import {
  WebhookSubscriptionsRepository,
  type WebhookSubscriptionRow,
} from './webhook-subscriptions.repository';
import { toWebhookResponse } from './webhook.mapper';

/** The events a subscription takes, as event interests. */
function interestsOf(events: readonly string[], configId: string | null): EventInterest[] {
  return events.filter(isEventType).map((type) => ({ type, configId }));
}

/** Webhook subscriptions (admins only): their rules, secrets and enabling. */
@Injectable()
export class WebhooksService {
  private readonly logger = new Logger(WebhooksService.name);

  constructor(
    private readonly subscriptions: WebhookSubscriptionsRepository,
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly sender: WebhookSender,
    private readonly configs: FormConfigsService,
    private readonly sites: SitesService,
    private readonly interests: EventInterests,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async list(ctx: RequestContext): Promise<WebhookListDto> {
    requireAdmin(ctx);
    const rows = await this.subscriptions.list();
    return { data: rows.map((row) => toWebhookResponse(row)), totalCount: rows.length };
  }

  async get(ctx: RequestContext, id: string): Promise<WebhookResponseDto> {
    requireAdmin(ctx);
    return toWebhookResponse(await this.require(id));
  }

  /** `siteId` absent: the site of the request's Host (none when the host is no site: every site). */
  async create(ctx: RequestContext, body: CreateWebhookDto): Promise<CreatedWebhookDto> {
    requireAdmin(ctx);
    const siteId = body.siteId === undefined ? ctx.siteId : body.siteId;
    await this.checkReferences(ctx, body.configId, siteId);
    // Declared first: a change committed once the subscription is stored writes its event.
    await this.interests.declare(interestsOf(body.events, body.configId ?? null));
    const row = await this.subscriptions.insert({
      url: body.url,
      events: body.events,
      configId: body.configId ?? null,
      siteId,
      description: body.description ?? null,
      secret: newWebhookSecret(),
      enabled: body.enabled ?? true,
      createdBy: requireUser(ctx).userId,
    });
    this.logger.log({ msg: `webhook ${row.id} created for ${row.events.join(', ')}`, webhookId: row.id });
    return { ...toWebhookResponse(row), secret: row.secret };
  }

  async update(ctx: RequestContext, id: string, body: UpdateWebhookDto): Promise<WebhookResponseDto> {
    requireAdmin(ctx);
    const current = await this.require(id);
    await this.checkReferences(ctx, body.configId, body.siteId);
    await this.interests.declare(
      interestsOf(
        body.events ?? current.events,
        body.configId !== undefined ? body.configId : current.configId,
      ),
    );
    const { enabled, ...changes } = body;
    await this.subscriptions.update(id, changes);
    if (enabled !== undefined && enabled !== current.enabled) {
      await this.subscriptions.setEnabled(id, enabled);
      if (enabled) {
        await this.deliveries.resume(id);
        this.sender.sendSoon();
      }
    }
    return toWebhookResponse(await this.require(id));
  }

  /** Deletes the subscription with its deliveries; answers it as it was. */
  async remove(ctx: RequestContext, id: string): Promise<WebhookResponseDto> {
    requireAdmin(ctx);
    const current = await this.require(id);
    if (!(await this.subscriptions.delete(id))) throw new AppError('WEBHOOK_NOT_FOUND');
    return toWebhookResponse(current);
  }

  /** A new secret, shown once; the previous one keeps signing for WEBHOOK_SECRET_GRACE_MS. */
  async rotateSecret(ctx: RequestContext, id: string): Promise<RotatedSecretDto> {
    requireAdmin(ctx);
    await this.require(id);
    const row = await this.subscriptions.rotateSecret(
      id,
      newWebhookSecret(),
      this.config.webhookSecretGraceMs,
    );
    if (!row?.previousSecretExpiresAt) throw new AppError('WEBHOOK_NOT_FOUND');
    this.logger.log({ msg: `webhook ${id}: secret rotated`, webhookId: id });
    return { secret: row.secret, previousSecretExpiresAt: row.previousSecretExpiresAt.toISOString() };
  }

  async require(id: string): Promise<WebhookSubscriptionRow> {
    const row = isUuid(id) ? await this.subscriptions.find(id) : null;
    if (!row) throw new AppError('WEBHOOK_NOT_FOUND');
    return row;
  }

  /** A named configuration and site must exist (and the site be active): 422 naming the field otherwise. */
  private async checkReferences(
    ctx: RequestContext,
    configId: string | null | undefined,
    siteId: string | null | undefined,
  ): Promise<void> {
    const problems: FieldError[] = [];
    if (configId) {
      const found = await this.configs.requireVisible(ctx, configId).then(
        () => true,
        (error: unknown) => {
          if (error instanceof AppError && error.code === 'CONFIG_NOT_FOUND') return false;
          throw error;
        },
      );
      if (!found)
        problems.push({
          field: 'configId',
          rule: 'exists',
          message: 'configId does not name a configuration',
        });
    }
    const siteProblem = await this.sites.siteIdProblem(siteId);
    if (siteProblem) problems.push(siteProblem);
    if (problems.length > 0) throw new AppError('VALIDATION_FAILED', { validationErrors: problems });
  }
}
