import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { PageNumberQueryDto } from './list-page';

/** `page` and `limit` of the history lists (runs, webhook deliveries): 1-based, 1..100 per page, 20 by default. */
export class ShortPageQueryDto extends PageNumberQueryDto {
  @ApiPropertyOptional({ default: 20, minimum: 1, maximum: 100 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100)
  limit?: number;
}
