import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsIn,
  IsISO8601,
  IsObject,
  IsOptional,
  IsUUID,
  ValidateNested,
} from 'class-validator';
import { RerunDto } from './rerun.dto';
import { RUN_STATUSES } from '../engine/model/run-model';

export class RunFilterDto {
  @ApiPropertyOptional({
    enum: RUN_STATUSES,
    isArray: true,
    example: ['queued', 'waiting'],
    description:
      'Default: queued, running, waiting (cancel); success, failed, rolled_back, cancelled (re-run)',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(RUN_STATUSES.length)
  @IsIn(RUN_STATUSES, { each: true })
  status?: string[];

  @ApiPropertyOptional({
    format: 'date-time',
    example: '2026-01-01T00:00:00Z',
    description: 'Started at or after',
  })
  @IsOptional()
  @IsISO8601({ strict: true })
  from?: string;

  @ApiPropertyOptional({
    format: 'date-time',
    example: '2100-01-01T00:00:00Z',
    description: 'Started before',
  })
  @IsOptional()
  @IsISO8601({ strict: true })
  to?: string;

  @ApiPropertyOptional({ format: 'uuid', description: 'Only the runs this user started' })
  @IsOptional()
  @IsUUID()
  userId?: string;
}

export class BulkCancelDto {
  @ApiPropertyOptional({ type: RunFilterDto, description: 'Which runs of the workflow (all fields combine)' })
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => RunFilterDto)
  filter?: RunFilterDto;
}

export class BulkRerunDto extends RerunDto {
  @ApiPropertyOptional({ type: RunFilterDto, description: 'Which runs of the workflow (all fields combine)' })
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => RunFilterDto)
  filter?: RunFilterDto;
}

export class OperationAcceptedDto {
  @ApiProperty({ format: 'uuid' }) operationId: string;
}

export class OperationFailureDto {
  @ApiProperty({ format: 'uuid' }) runId: string;
  @ApiProperty({ example: 'WORKFLOW_RUN_FINISHED' }) code: string;
}

export class RunOperationDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) workflowId: string;
  @ApiProperty({ enum: ['cancel', 'rerun'] }) kind: string;
  @ApiProperty({ enum: ['running', 'done'] }) status: string;
  @ApiProperty({ description: 'Runs the filter matched when the operation was accepted' }) matched: number;
  @ApiProperty({ description: 'Runs handled (cancelled, or re-run: queued)' }) done: number;
  @ApiProperty({ description: 'Runs that could not be handled; see failures' }) failed: number;
  @ApiProperty({ type: [OperationFailureDto] }) failures: OperationFailureDto[];
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) finishedAt: string | null;
}
