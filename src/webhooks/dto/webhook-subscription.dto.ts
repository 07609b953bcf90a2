import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsIn,
  IsOptional,
  IsString,
  IsUrl,
  MaxLength,
  ValidateIf,
} from 'class-validator';
import { EVENT_TYPES, type EventType } from '../../events/domain-event';
import { OptionalIdField } from '../../common/validation/dto-fields';

const EVENTS_DESCRIPTION =
  'Event types delivered: `record.created`, `record.updated`, `record.deleted`, `record.restored` (body ' +
  '`WebhookRecordEventDto`) and `workflow.run.finished` (body `WebhookRunFinishedEventDto`)';
const URL_OPTIONS = { protocols: ['http', 'https'], require_protocol: true, require_tld: false };
const URL_MESSAGE = 'url must be an http or https URL';

export class CreateWebhookDto {
  @ApiProperty({
    example: 'https://hooks.example.com/forms',
    description:
      'http or https; called through the outbound guard of the `api` step (private addresses refused)',
  })
  @IsString()
  @MaxLength(2048)
  @IsUrl(URL_OPTIONS, { message: URL_MESSAGE })
  url: string;

  @ApiProperty({
    enum: EVENT_TYPES,
    isArray: true,
    example: ['record.created'],
    description: EVENTS_DESCRIPTION,
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(EVENT_TYPES.length)
  @ArrayUnique()
  @IsIn(EVENT_TYPES, { each: true })
  events: EventType[];

  @OptionalIdField(
    "Only this configuration's events (workflow runs: the run's configuration); null = every one",
  )
  configId?: string | null;

  @OptionalIdField(
    "Only this site's events; null = every site. Absent: the site of the request's Host (null when it is none)",
  )
  siteId?: string | null;

  @ApiPropertyOptional({ nullable: true, type: String, example: 'Order intake to the ERP' })
  @IsOptional()
  @ValidateIf((_, value) => value !== null)
  @IsString()
  @MaxLength(500)
  description?: string | null;

  @ApiPropertyOptional({ example: true, description: 'Default true; false queues nothing for it' })
  @IsOptional()
  @IsBoolean()
  enabled?: boolean;
}

export class UpdateWebhookDto {
  @ApiPropertyOptional({ example: 'https://hooks.example.com/forms/v2' })
  @IsOptional()
  @IsString()
  @MaxLength(2048)
  @IsUrl(URL_OPTIONS, { message: URL_MESSAGE })
  url?: string;

  @ApiPropertyOptional({ enum: EVENT_TYPES, isArray: true, example: ['record.created', 'record.updated'] })
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(EVENT_TYPES.length)
  @ArrayUnique()
  @IsIn(EVENT_TYPES, { each: true })
  events?: EventType[];

  @OptionalIdField('null: every configuration')
  configId?: string | null;

  @OptionalIdField('null: every site')
  siteId?: string | null;

  @ApiPropertyOptional({ nullable: true, type: String })
  @IsOptional()
  @ValidateIf((_, value) => value !== null)
  @IsString()
  @MaxLength(500)
  description?: string | null;

  @ApiPropertyOptional({
    example: true,
    description:
      'true enables a disabled subscription again (its pending deliveries are sent at once); false disables it',
  })
  @IsOptional()
  @IsBoolean()
  enabled?: boolean;
}

/** A subscription as every answer shows it: never its secret. */
export class WebhookResponseDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ example: 'https://hooks.example.com/forms' }) url: string;
  @ApiProperty({ enum: EVENT_TYPES, isArray: true, description: EVENTS_DESCRIPTION }) events: EventType[];
  @ApiProperty({ format: 'uuid', nullable: true, type: String }) configId: string | null;
  @ApiProperty({ format: 'uuid', nullable: true, type: String }) siteId: string | null;
  @ApiProperty({ nullable: true, type: String }) description: string | null;
  @ApiProperty({ description: 'false: nothing is queued or sent for it' }) enabled: boolean;
  @ApiProperty({ nullable: true, type: String, description: 'Why the service disabled it' })
  disabledReason: string | null;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) disabledAt: string | null;
  @ApiProperty({
    format: 'date-time',
    nullable: true,
    type: String,
    description: 'The first failed attempt since the last accepted delivery; null while deliveries succeed',
  })
  failingSince: string | null;
  @ApiProperty({
    format: 'date-time',
    nullable: true,
    type: String,
    description: 'Until when the previous secret still signs (after a rotation)',
  })
  previousSecretExpiresAt: string | null;
  @ApiProperty({ format: 'uuid', nullable: true, type: String }) createdBy: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
}

/** The create answer: the only time (with a rotation) the secret is shown. */
export class CreatedWebhookDto extends WebhookResponseDto {
  @ApiProperty({
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    description: 'The signing secret, shown only now: keep it to verify `webhook-signature`',
  })
  secret: string;
}

export class RotatedSecretDto {
  @ApiProperty({
    example: 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD',
    description: 'The new secret, shown only now',
  })
  secret: string;
  @ApiProperty({
    format: 'date-time',
    description: 'Until then every delivery carries a second signature, made with the previous secret',
  })
  previousSecretExpiresAt: string;
}

export class WebhookListDto {
  @ApiProperty({ type: [WebhookResponseDto], description: 'Newest first' }) data: WebhookResponseDto[];
  @ApiProperty({ example: 1 }) totalCount: number;
}
