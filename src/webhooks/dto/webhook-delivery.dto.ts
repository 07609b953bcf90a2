import { ApiProperty } from '@nestjs/swagger';
import { EVENT_TYPES } from '../../events/domain-event';

export const DELIVERY_STATES = ['pending', 'sent', 'failed'] as const;

export class WebhookErrorDto {
  @ApiProperty({
    example: 'HTTP_STATUS',
    description: '`HTTP_STATUS`, `TIMEOUT`, `NETWORK_ERROR`, `DESTINATION_REFUSED`, ...',
  })
  code: string;
  @ApiProperty({ example: 'the receiver answered 503' }) message: string;
}

export class WebhookAttemptDto {
  @ApiProperty({ example: 1 }) attempt: number;
  @ApiProperty({ format: 'date-time' }) at: string;
  @ApiProperty({
    nullable: true,
    type: Number,
    example: 503,
    description: "The answer's status; null without one",
  })
  status: number | null;
  @ApiProperty({ example: 35 }) durationMs: number;
  @ApiProperty({ type: WebhookErrorDto, nullable: true }) error: WebhookErrorDto | null;
  @ApiProperty({ nullable: true, type: String, description: "The first 1 KB of the answer's body" })
  response: string | null;
}

export class WebhookDeliveryDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({
    format: 'uuid',
    description: 'The `webhook-id` header: the same on every attempt and redelivery',
  })
  eventId: string;
  @ApiProperty({ enum: EVENT_TYPES }) eventType: string;
  @ApiProperty({ enum: DELIVERY_STATES }) state: string;
  @ApiProperty({ example: 1 }) attempts: number;
  @ApiProperty({
    format: 'date-time',
    nullable: true,
    type: String,
    description: 'Next attempt (pending only)',
  })
  nextAttemptAt: string | null;
  @ApiProperty({ type: WebhookErrorDto, nullable: true }) lastError: WebhookErrorDto | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) sentAt: string | null;
  @ApiProperty({
    format: 'uuid',
    nullable: true,
    type: String,
    description: 'The delivery this one sends again',
  })
  redeliveryOf: string | null;
  @ApiProperty({ type: [WebhookAttemptDto], description: 'Oldest first' }) attemptLog: WebhookAttemptDto[];
}

export class WebhookDeliveryPageDto {
  @ApiProperty({ type: [WebhookDeliveryDto], description: 'Newest first' }) data: WebhookDeliveryDto[];
  @ApiProperty({ example: 3 }) total: number;
  @ApiProperty({ example: 1 }) page: number;
  @ApiProperty({ example: 1, description: 'ceil(total / limit)' }) pages: number;
}
