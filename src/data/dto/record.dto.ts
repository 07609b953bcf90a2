import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

export class RecordDto {
  @ApiProperty({ format: 'uuid' }) _id: string;
  @ApiProperty({ format: 'uuid' }) configId: string;
  @ApiProperty({ format: 'uuid', nullable: true, type: String }) userId: string | null;
  @ApiProperty({ format: 'uuid', nullable: true, type: String }) siteId: string | null;
  @ApiProperty({ type: Object, example: { name: 'Jane', qty: 3, price: 9.5 } }) data: Record<string, unknown>;
  @ApiPropertyOptional({ type: Object, example: { total: 28.5 } }) computedResults?: Record<string, unknown>;
  @ApiProperty() isActive: boolean;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
  @ApiPropertyOptional({ type: [Object], description: 'Workflow log (single-record read only)' })
  workflow?: unknown[];
}

export class SavedRecordDto {
  @ApiProperty({ example: true }) success: boolean;
  @ApiProperty({ format: 'uuid' }) dataId: string;
  @ApiProperty({ type: RecordDto }) data: RecordDto;
  @ApiProperty({ type: Object, example: { total: 28.5 } }) computedResults: Record<string, unknown>;
}

export class RecordPageDto {
  @ApiProperty({ type: [RecordDto] }) data: RecordDto[];
  @ApiProperty({ example: 57 }) total: number;
  @ApiProperty({ example: 1 }) page: number;
  @ApiProperty({ example: 3, description: 'ceil(total / limit)' }) pages: number;
}
