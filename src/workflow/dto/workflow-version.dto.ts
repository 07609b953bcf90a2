import { ApiProperty, PickType } from '@nestjs/swagger';
import { WorkflowResponseDto } from './workflow-response.dto';

/** The parts of a definition a version can change, as `changed` names them. */
export const WORKFLOW_PARTS = [
  'name',
  'alias',
  'description',
  'type',
  'config',
  'permissions',
  'tags',
  'siteId',
  'isActive',
] as const;
export type WorkflowPart = (typeof WORKFLOW_PARTS)[number];

export class WorkflowVersionSummaryDto {
  @ApiProperty({ example: 2 }) version: number;
  @ApiProperty({
    format: 'uuid',
    nullable: true,
    type: String,
    description: 'Who made the version (null for the version kept when versions began to be kept)',
  })
  savedBy: string | null;
  @ApiProperty({ format: 'date-time' }) savedAt: string;
  @ApiProperty({
    enum: WORKFLOW_PARTS,
    isArray: true,
    nullable: true,
    description: 'What differs from the version before; null for the first version kept',
  })
  changed: WorkflowPart[] | null;
}

export class WorkflowVersionListDto {
  @ApiProperty({ type: [WorkflowVersionSummaryDto], description: 'Newest first' })
  data: WorkflowVersionSummaryDto[];
  @ApiProperty({ example: 2 }) totalCount: number;
}

/** One kept version: the definition as it was saved. */
export class WorkflowVersionDto extends PickType(WorkflowResponseDto, [
  ...WORKFLOW_PARTS,
  'authorId',
] as const) {
  @ApiProperty({ format: 'uuid' }) workflowId: string;
  @ApiProperty({ example: 1 }) version: number;
  @ApiProperty({ format: 'uuid', nullable: true, type: String }) savedBy: string | null;
  @ApiProperty({ format: 'date-time' }) savedAt: string;
}
