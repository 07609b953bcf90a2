import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { FREE_OBJECT, JSON_VALUE } from '../../common/http/openapi-schemas';
import { LocaleQueryDto } from '../../common/http/locale-query.dto';
import { VERSIONED_PARTS, type ConfigVersionAction } from '../form-config-versions.repository';
import { ComputedRuleDto, PreferencesDto, ValidationRuleDto } from './form-config.dto';

export class ConfigVersionSummaryDto {
  @ApiProperty({ example: 2, description: "The version number: the configuration's `version` it was" })
  version: number;
  @ApiProperty({
    enum: ['created', 'updated', 'restored', 'recorded'],
    example: 'updated',
    description:
      '`recorded`: the content the configuration had when form versions came in (earlier ones were not kept)',
  })
  action: ConfigVersionAction;
  @ApiProperty({
    nullable: true,
    type: Number,
    example: null,
    description: 'The version a restore brought back',
  })
  restoredFrom: number | null;
  @ApiProperty({
    type: [String],
    enum: VERSIONED_PARTS,
    example: ['schema', 'validationRules'],
    description: 'What differs from the previous version (empty for the first one kept)',
  })
  changedParts: string[];
  @ApiProperty({ format: 'uuid', nullable: true, type: String, description: 'Who made this version' })
  authorId: string | null;
  @ApiProperty({ format: 'date-time', description: 'When this version was made' }) createdAt: string;
}

export class ConfigVersionPageDto {
  @ApiProperty({ type: [ConfigVersionSummaryDto], description: 'Newest first' })
  data: ConfigVersionSummaryDto[];
  @ApiProperty({ example: 3 }) total: number;
  @ApiProperty({ example: 1 }) page: number;
  @ApiProperty({ example: 1, description: 'ceil(total / limit)' }) pages: number;
}

/** One version with its content, as it was (immutable). */
export class ConfigVersionDto extends ConfigVersionSummaryDto {
  @ApiProperty({ format: 'uuid' }) configId: string;
  @ApiProperty() title: string;
  @ApiProperty({ enum: ['grid', 'tree', 'form'] }) type: string;
  @ApiProperty({ type: [String] }) tags: string[];
  @ApiProperty({ format: 'uuid', nullable: true, type: String }) siteId: string | null;
  @ApiProperty({ nullable: true, type: String }) description: string | null;
  @ApiProperty({ ...FREE_OBJECT, nullable: true }) schema: Record<string, unknown> | null;
  @ApiProperty({ type: [ValidationRuleDto] }) validationRules: ValidationRuleDto[];
  @ApiProperty({ type: [ComputedRuleDto] }) computedRules: ComputedRuleDto[];
  @ApiProperty({ type: PreferencesDto }) preferences: PreferencesDto;
  @ApiProperty({ ...JSON_VALUE, nullable: true }) definition: unknown;
}

/** `?version=n` of the per-form OpenAPI document. */
export class FormDocumentQueryDto extends LocaleQueryDto {
  @ApiPropertyOptional({
    minimum: 1,
    example: 1,
    description: 'A kept version of the form (default: the current one)',
  })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(2_147_483_647)
  version?: number;
}
