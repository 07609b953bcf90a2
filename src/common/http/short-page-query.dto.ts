import { ApiHideProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, Min } from 'class-validator';

/** `page` and `limit` of the history lists (runs, webhook deliveries): 1-based, 1..100 per page, 20 by default. */
export class ShortPageQueryDto {
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
