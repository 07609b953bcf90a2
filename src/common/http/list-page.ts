import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { LocaleQueryDto } from './locale-query.dto';

/**
 * The highest page any list takes: its offset (page - 1) x limit stays far inside what PostgreSQL's
 * OFFSET holds (a page of 1e300 was a 500), and no list is ever paged that far.
 */
export const MAX_PAGE = 10_000_000;

/** `page` of a paged list: 1-based, 1..MAX_PAGE; each list adds its own `limit`. */
export class PageNumberQueryDto extends LocaleQueryDto {
  @ApiPropertyOptional({ default: 1, minimum: 1, maximum: MAX_PAGE })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE)
  page?: number;
}

/** `page` and `limit` of the simple admin lists (users): 1-based, 1..500 per page. */
export class PageQueryDto extends PageNumberQueryDto {
  @ApiPropertyOptional({ default: 100, minimum: 1, maximum: 500 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(500)
  limit?: number;
}
