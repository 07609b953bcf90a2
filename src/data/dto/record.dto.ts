import { RecordAttachmentDto } from '../../attachments/dto/attachment.dto';
import { ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { FREE_OBJECT, JSON_VALUE } from '../../common/http/openapi-schemas';

export class RecordDto {
  @ApiProperty({ format: 'uuid' }) _id: string;
  @ApiProperty({ format: 'uuid' }) configId: string;
  @ApiProperty({ format: 'uuid', nullable: true, type: String }) userId: string | null;
  @ApiProperty({ format: 'uuid', nullable: true, type: String }) siteId: string | null;
  @ApiProperty({ ...FREE_OBJECT, example: { name: 'Jane', qty: 3, price: 9.5 } }) data: Record<
    string,
    unknown
  >;
  @ApiPropertyOptional({ ...FREE_OBJECT, example: { total: 28.5 } }) computedResults?: Record<
    string,
    unknown
  >;
  @ApiProperty() isActive: boolean;
  @ApiPropertyOptional({
    enum: ['draft'],
    description:
      'Present on drafts only (README "Drafts"): saved without its required fields, rules and computed values, ' +
      'seen by its owner and admins; `POST /api/data/:configId/:dataId/submit` submits it. A submitted record has no `status`',
  })
  status?: 'draft';
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
  @ApiPropertyOptional({
    format: 'date-time',
    description: 'When the record went to the trash (records of the trash only)',
  })
  deletedAt?: string;
  @ApiProperty({
    example: 3,
    description:
      'Rises by one with every change (update, delete, restore); the ETag `"<version>"` of the single-record routes, ' +
      'to send back as If-Match',
  })
  version: number;
  @ApiProperty({
    example: 2,
    description:
      'The version of the configuration the record was last validated against (create and every edit move it ' +
      'to the current one); `GET /api/configs/:configId/versions/:n` shows that version',
  })
  configVersion: number;
  @ApiPropertyOptional({
    type: 'array',
    items: FREE_OBJECT,
    description: 'Workflow log (single-record read only)',
  })
  workflow?: unknown[];
  @ApiPropertyOptional({
    type: [RecordAttachmentDto],
    description:
      'Files its attachment fields refer to, with download URLs (forms with attachment fields; single-record read and write answers)',
  })
  attachments?: RecordAttachmentDto[];
}

export class SavedRecordDto {
  @ApiProperty({ example: true }) success: boolean;
  @ApiProperty({ format: 'uuid' }) dataId: string;
  @ApiProperty({ type: RecordDto }) data: RecordDto;
  @ApiProperty({ ...FREE_OBJECT, example: { total: 28.5 } }) computedResults: Record<string, unknown>;
}

export class RecordPageDto {
  @ApiProperty({ type: [RecordDto] }) data: RecordDto[];
  @ApiProperty({ example: 57 }) total: number;
  @ApiProperty({ example: 1 }) page: number;
  @ApiProperty({ example: 3, description: 'ceil(total / limit)' }) pages: number;
}

/** A group of the grid form (docs/grid-protocol.md section 8). */
export class GridGroupDto {
  @ApiProperty({
    ...JSON_VALUE,
    nullable: true,
    description: 'The group key: a stored value, or the key of a numeric or date interval',
  })
  key: unknown;
  @ApiProperty({
    nullable: true,
    type: 'array',
    items: FREE_OBJECT,
    description: 'Subgroups, or the records of the last level; null when the level is not expanded',
  })
  items: (GridGroupDto | RecordDto)[] | null;
  @ApiProperty() count: number;
  @ApiPropertyOptional({ type: 'array', items: {}, description: 'groupSummary values, in order' })
  summary?: unknown[];
}

/** The grid-library form of the list (docs/grid-protocol.md). */
export class GridPageDto {
  @ApiProperty({
    type: 'array',
    items: { oneOf: [{ $ref: getSchemaPath(RecordDto) }, { $ref: getSchemaPath(GridGroupDto) }] },
    description: 'The page of records, or of top-level groups when grouped',
  })
  data: (RecordDto | GridGroupDto)[];
  @ApiPropertyOptional({ description: 'With requireTotalCount' }) totalCount?: number;
  @ApiPropertyOptional({ description: 'With requireGroupCount and group' }) groupCount?: number;
  @ApiPropertyOptional({ type: 'array', items: {}, description: 'totalSummary values, in order' })
  summary?: unknown[];
}
