import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsOptional, IsString, IsUUID, Length, ValidateIf } from 'class-validator';

/**
 * An id a request body may give or leave out (a site's, a configuration's): a UUID, or null for none.
 * `description` says what null and an absent value mean there.
 */
export const OptionalIdField = (description: string) =>
  applyDecorators(
    ApiPropertyOptional({ format: 'uuid', nullable: true, type: String, example: null, description }),
    IsOptional(),
    ValidateIf((_, value) => value !== null),
    IsUUID(),
  );

/** Free tags on a form or a workflow: at most 50, each 1 to 50 characters. */
export const OptionalTagsField = (example: string[]) =>
  applyDecorators(
    ApiPropertyOptional({ type: [String], example }),
    IsOptional(),
    IsArray(),
    ArrayMaxSize(50),
    IsString({ each: true }),
    Length(1, 50, { each: true }),
  );
