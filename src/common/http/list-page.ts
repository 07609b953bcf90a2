import { ApiHideProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, Min } from 'class-validator';

/** `page` and `limit` of the simple admin lists (users): 1-based, 1..500 per page. */
export class PageQueryDto {
  @ApiPropertyOptional({ default: 1, minimum: 1 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  page?: number;

  @ApiPropertyOptional({ default: 100, minimum: 1, maximum: 500 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(500)
  limit?: number;

  @ApiPropertyOptional({ enum: ['en', 'hu'] }) @IsOptional() @IsString() lang?: string;

  /** jQuery's cache-buster (`cache: false`); accepted and ignored. */
  @ApiHideProperty() @IsOptional() @IsString() _?: string;
  @ApiPropertyOptional({ enum: ['en', 'hu'] }) @IsOptional() @IsString() locale?: string;
}
