import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiCreatedResponse,
  ApiExtraModels,
  ApiForbiddenResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import { Roles } from '../common/auth/auth-decision.decorators';
import { Ctx } from '../common/context/ctx.decorator';
import { ApiCallbacks } from '../common/http/openapi-document';
import type { RequestContext } from '../common/context/request-context';
import { ShortPageQueryDto } from '../common/http/short-page-query.dto';
import { WEBHOOK_CALLBACKS } from './dto/webhook-callbacks';
import { WebhookDeliveryDto, WebhookDeliveryPageDto } from './dto/webhook-delivery.dto';
import { WEBHOOK_EVENT_MODELS } from './dto/webhook-event.dto';
import {
  CreatedWebhookDto,
  CreateWebhookDto,
  RotatedSecretDto,
  UpdateWebhookDto,
  WebhookListDto,
  WebhookResponseDto,
} from './dto/webhook-subscription.dto';
import { WebhookDeliveriesService } from './webhook-deliveries.service';
import { WebhooksService } from './webhooks.service';
import { RoutedRead } from '../database/replicas/routed-read.interceptor';

const SIGNED =
  'Each delivery is a POST of `{type, timestamp, data}` (`WebhookRecordEventDto`, `WebhookRunFinishedEventDto`) ' +
  'signed after the Standard Webhooks scheme: `webhook-id` (the event id), `webhook-timestamp` (Unix seconds), ' +
  '`webhook-signature` (`v1,<base64 HMAC-SHA256 of id.timestamp.body>` keyed by the secret). Admins only.';
const NOT_ADMIN = 'The caller is not an admin (FORBIDDEN)';
const NO_WEBHOOK = 'No such subscription (WEBHOOK_NOT_FOUND)';

@ApiTags('webhooks')
@ApiExtraModels(...WEBHOOK_EVENT_MODELS)
@ApiForbiddenResponse({ description: NOT_ADMIN })
@Controller('api/webhooks')
export class WebhooksController {
  constructor(
    private readonly webhooks: WebhooksService,
    private readonly deliveries: WebhookDeliveriesService,
  ) {}

  @Get()
  @Roles('admin')
  @ApiOperation({
    summary: 'List webhook subscriptions, newest first (never their secrets)',
    description: SIGNED,
  })
  @ApiOkResponse({ type: WebhookListDto })
  list(@Ctx() ctx: RequestContext): Promise<WebhookListDto> {
    return this.webhooks.list(ctx);
  }

  @Post()
  @Roles('admin')
  @ApiOperation({
    summary: 'Subscribe a URL to events; the answer shows the signing secret, once',
    description: `${SIGNED} \`siteId\` absent: the site of the request's Host (none: every site).`,
  })
  @ApiCallbacks(WEBHOOK_CALLBACKS)
  @ApiCreatedResponse({ type: CreatedWebhookDto })
  @ApiUnprocessableEntityResponse({
    description: 'Not an http(s) URL, an unknown event type or field, an unknown configuration or site',
  })
  create(@Ctx() ctx: RequestContext, @Body() body: CreateWebhookDto): Promise<CreatedWebhookDto> {
    return this.webhooks.create(ctx, body);
  }

  @Get(':webhookId')
  @Roles('admin')
  @ApiOperation({ summary: 'One webhook subscription (never its secret)' })
  @ApiOkResponse({ type: WebhookResponseDto })
  @ApiNotFoundResponse({ description: NO_WEBHOOK })
  get(@Ctx() ctx: RequestContext, @Param('webhookId') webhookId: string): Promise<WebhookResponseDto> {
    return this.webhooks.get(ctx, webhookId);
  }

  @Put(':webhookId')
  @Roles('admin')
  @ApiOperation({
    summary: 'Change a subscription; `enabled: true` enables a disabled one and sends its pending deliveries',
  })
  @ApiOkResponse({ type: WebhookResponseDto })
  @ApiNotFoundResponse({ description: NO_WEBHOOK })
  @ApiUnprocessableEntityResponse({ description: 'Invalid body, an unknown configuration or site' })
  update(
    @Ctx() ctx: RequestContext,
    @Param('webhookId') webhookId: string,
    @Body() body: UpdateWebhookDto,
  ): Promise<WebhookResponseDto> {
    return this.webhooks.update(ctx, webhookId, body);
  }

  @Delete(':webhookId')
  @Roles('admin')
  @ApiOperation({ summary: 'Delete a subscription with its deliveries; answers it as it was' })
  @ApiOkResponse({ type: WebhookResponseDto })
  @ApiNotFoundResponse({ description: NO_WEBHOOK })
  remove(@Ctx() ctx: RequestContext, @Param('webhookId') webhookId: string): Promise<WebhookResponseDto> {
    return this.webhooks.remove(ctx, webhookId);
  }

  @Post(':webhookId/rotate-secret')
  @HttpCode(200)
  @Roles('admin')
  @ApiOperation({
    summary: 'A new signing secret, shown once; the previous one signs too until `previousSecretExpiresAt`',
    description:
      'During that grace period (WEBHOOK_SECRET_GRACE_MS) `webhook-signature` carries two signatures, ' +
      'one per secret, separated by a space.',
  })
  @ApiOkResponse({ type: RotatedSecretDto })
  @ApiNotFoundResponse({ description: NO_WEBHOOK })
  rotateSecret(@Ctx() ctx: RequestContext, @Param('webhookId') webhookId: string): Promise<RotatedSecretDto> {
    return this.webhooks.rotateSecret(ctx, webhookId);
  }

  @Get(':webhookId/deliveries')
  @RoutedRead()
  @Roles('admin')
  @ApiOperation({ summary: "A subscription's deliveries, newest first, each with its attempts and answers" })
  @ApiOkResponse({ type: WebhookDeliveryPageDto })
  @ApiNotFoundResponse({ description: NO_WEBHOOK })
  listDeliveries(
    @Ctx() ctx: RequestContext,
    @Param('webhookId') webhookId: string,
    @Query() query: ShortPageQueryDto,
  ): Promise<WebhookDeliveryPageDto> {
    return this.deliveries.list(ctx, webhookId, query);
  }

  @Post(':webhookId/deliveries/:deliveryId/redeliver')
  @HttpCode(202)
  @Roles('admin')
  @ApiOperation({
    summary: 'Send a delivery again: a new delivery of the same event and body (the same `webhook-id`)',
  })
  @ApiAcceptedResponse({ type: WebhookDeliveryDto })
  @ApiNotFoundResponse({ description: `${NO_WEBHOOK}, or no such delivery (WEBHOOK_DELIVERY_NOT_FOUND)` })
  redeliver(
    @Ctx() ctx: RequestContext,
    @Param('webhookId') webhookId: string,
    @Param('deliveryId') deliveryId: string,
  ): Promise<WebhookDeliveryDto> {
    return this.deliveries.redeliver(ctx, webhookId, deliveryId);
  }
}
