import { ApiHideProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString } from 'class-validator';

/**
 * Query parameters every query DTO accepts: the message language (read once per request, see
 * `resolveLocale`) and jQuery's cache-buster. DTOs of query strings extend it, so neither is a 422.
 */
export class LocaleQueryDto {
  @ApiPropertyOptional({ description: 'Message language', enum: ['en', 'hu'] })
  @IsOptional()
  @IsString()
  lang?: string;

  @ApiPropertyOptional({ description: 'Message language', enum: ['en', 'hu'] })
  @IsOptional()
  @IsString()
  locale?: string;

  /** jQuery's cache-buster (`cache: false`); accepted and ignored. */
  @ApiHideProperty() @IsOptional() @IsString() _?: string;
}
