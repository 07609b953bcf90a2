import { ApiHideProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { RUN_STATUSES } from './workflow-response.dto';

export class RunHistoryQueryDto {
  @ApiPropertyOptional({ default: 1 }) @IsOptional() @Type(() => Number) @IsInt() @Min(1) page?: number;
  @ApiPropertyOptional({ default: 20, maximum: 100 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100)
  limit?: number;
  @ApiPropertyOptional({ enum: ['en', 'hu'] }) @IsOptional() @IsString() lang?: string;
  @ApiPropertyOptional({ enum: ['en', 'hu'] }) @IsOptional() @IsString() locale?: string;
  @ApiHideProperty() @IsOptional() @IsString() _?: string;
}

export class RunListQueryDto extends RunHistoryQueryDto {
  @ApiPropertyOptional({ enum: RUN_STATUSES, example: 'waiting' })
  @IsOptional()
  @IsIn(RUN_STATUSES)
  status?: (typeof RUN_STATUSES)[number];
}
