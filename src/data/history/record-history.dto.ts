import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { ChangeOrigin } from '../../common/context/request-context';
import { JSON_VALUE } from '../../common/http/openapi-schemas';
import type { HistoryAction } from './record-history.repository';

const FIELD_CHANGE = {
  type: 'object' as const,
  description: '`before` is absent for an added field, `after` for a removed one',
  properties: { before: JSON_VALUE, after: JSON_VALUE },
};

/** A file an entry added to or removed from a record. */
export class AttachmentChangeDto {
  @ApiProperty({ format: 'uuid' }) attachmentId: string;
  @ApiProperty({ example: 'photo' }) field: string;
  @ApiPropertyOptional({ example: 'receipt.png', description: 'Absent once the upload was cleaned up' })
  filename?: string;
  @ApiPropertyOptional({ example: 'image/png' }) mediaType?: string;
  @ApiPropertyOptional({ example: 48213 }) size?: number;
}

export class AttachmentChangesDto {
  @ApiProperty({ type: [AttachmentChangeDto] }) added: AttachmentChangeDto[];
  @ApiProperty({ type: [AttachmentChangeDto] }) removed: AttachmentChangeDto[];
}

export class RecordHistoryEntryDto {
  @ApiProperty({ example: 42, description: 'Increases with every entry written' }) id: number;
  @ApiProperty({ format: 'uuid' }) recordId: string;
  @ApiProperty({ format: 'uuid' }) configId: string;
  @ApiProperty({
    enum: ['created', 'updated', 'deleted', 'restored', 'draft_saved', 'submitted'],
    example: 'updated',
  })
  action: HistoryAction;
  @ApiProperty({ format: 'uuid', nullable: true, type: String, description: 'Who made the change' })
  userId: string | null;
  @ApiProperty({
    nullable: true,
    description:
      'The route (method and pattern) or the workflow run and step the change came through; `retention` for a ' +
      'draft moved to the trash after DRAFT_RETENTION_DAYS untouched',
    oneOf: [
      {
        type: 'object',
        required: ['kind', 'route'],
        properties: { kind: { type: 'string', enum: ['route'] }, route: { type: 'string' } },
      },
      {
        type: 'object',
        required: ['kind', 'runId', 'step'],
        properties: {
          kind: { type: 'string', enum: ['workflow'] },
          runId: { type: 'string', format: 'uuid' },
          step: { type: 'string' },
        },
      },
      {
        type: 'object',
        required: ['kind', 'days'],
        properties: { kind: { type: 'string', enum: ['retention'] }, days: { type: 'integer' } },
      },
    ],
    example: { kind: 'route', route: 'PATCH /api/data/:configId/:dataId' },
  })
  origin: ChangeOrigin | null;
  @ApiProperty({
    type: 'object',
    additionalProperties: FIELD_CHANGE,
    description:
      'Per-field diff of `data` (top-level fields; a changed object or array is shown whole): every field of a ' +
      'created record as `after`; `{}` for a delete or a restore',
    example: { qty: { before: 3, after: 4 } },
  })
  changes: Record<string, { before?: unknown; after?: unknown }>;
  @ApiProperty({ format: 'date-time' }) at: string;
  @ApiProperty({
    nullable: true,
    type: Number,
    example: 2,
    description:
      "The record's configVersion after the change (the form version a create or edit was validated against); " +
      'null on entries written before form versions',
  })
  configVersion: number | null;
  @ApiProperty({
    format: 'date-time',
    nullable: true,
    type: String,
    description:
      'When an erasure removed the values of this entry (README "Erasure"): `changes` then names the fields with ' +
      'empty changes (`{"ssn": {}}`); null otherwise',
  })
  erasedAt: string | null;
  @ApiPropertyOptional({
    type: () => AttachmentChangesDto,
    description:
      'Entries changing an attachment field (README "Attachments"): the files it added and removed, with their ' +
      'name and type while the upload is still stored',
  })
  attachments?: AttachmentChangesDto;
}

export class RecordHistoryPageDto {
  @ApiProperty({ type: [RecordHistoryEntryDto], description: 'Newest first' })
  data: RecordHistoryEntryDto[];
  @ApiProperty({ example: 3 }) total: number;
  @ApiProperty({ example: 1 }) page: number;
  @ApiProperty({ example: 1, description: 'ceil(total / limit)' }) pages: number;
}
