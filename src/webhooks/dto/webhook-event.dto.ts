import { ApiProperty } from '@nestjs/swagger';
import { FREE_OBJECT } from '../../common/http/openapi-schemas';
import { RecordDto } from '../../data/dto/record.dto';
import { EVENT_TYPES } from '../../events/domain-event';

const RECORD_EVENT_TYPES = EVENT_TYPES.filter((type) => type.startsWith('record.'));

export class WebhookRecordEventDataDto {
  @ApiProperty({ type: RecordDto, description: 'The record as the API returns it, after the change' })
  record: RecordDto;
  @ApiProperty({
    ...FREE_OBJECT,
    description: 'Per-field diff of `data` as the record history writes it (`{}` for a delete or restore)',
    example: { qty: { before: 3, after: 4 } },
  })
  changes: Record<string, unknown>;
  @ApiProperty({ example: 42, description: 'The id of the record history entry of the change' })
  historyId: number;
}

/** The body of `record.created`, `record.updated`, `record.deleted` and `record.restored` deliveries. */
export class WebhookRecordEventDto {
  @ApiProperty({ enum: RECORD_EVENT_TYPES, example: 'record.updated' }) type: string;
  @ApiProperty({ format: 'date-time', description: 'When the change happened' }) timestamp: string;
  @ApiProperty({ type: WebhookRecordEventDataDto }) data: WebhookRecordEventDataDto;
}

export class WebhookRunSummaryDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) workflowId: string;
  @ApiProperty({ enum: ['success', 'failed', 'rolled_back', 'cancelled'], example: 'success' })
  status: string;
  @ApiProperty({ nullable: true, type: String }) message: string | null;
  @ApiProperty({ format: 'uuid', nullable: true, type: String }) configId: string | null;
  @ApiProperty({ format: 'uuid', nullable: true, type: String }) dataId: string | null;
  @ApiProperty({ format: 'uuid', nullable: true, type: String }) userId: string | null;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) startedAt: string | null;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) finishedAt: string | null;
  @ApiProperty({ nullable: true, type: Number, example: 120 }) durationMs: number | null;
}

export class WebhookRunEventDataDto {
  @ApiProperty({ type: WebhookRunSummaryDto }) run: WebhookRunSummaryDto;
}

/** The body of `workflow.run.finished` deliveries. */
export class WebhookRunFinishedEventDto {
  @ApiProperty({ enum: ['workflow.run.finished'], example: 'workflow.run.finished' }) type: string;
  @ApiProperty({ format: 'date-time', description: 'When the run ended' }) timestamp: string;
  @ApiProperty({ type: WebhookRunEventDataDto }) data: WebhookRunEventDataDto;
}

/** Every event body, for the OpenAPI document. */
export const WEBHOOK_EVENT_MODELS = [
  WebhookRecordEventDto,
  WebhookRecordEventDataDto,
  WebhookRunFinishedEventDto,
  WebhookRunEventDataDto,
  WebhookRunSummaryDto,
];
