import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { FREE_OBJECT } from '../../common/http/openapi-schemas';
import { IsBoolean, IsIn, IsOptional, IsString, Length, ValidateBy, buildMessage } from 'class-validator';
import { SUPPORTED_LOCALES } from '../../config/app-config';
import {
  ComputedRuleDto,
  ConfigResponseDto,
  PreferencesDto,
  ValidationRuleDto,
  type ConfigType,
} from '../../form-configs/dto/form-config.dto';
import { CSV_SAMPLE_LIMITS } from '../csv-samples';

const CONFIG_TYPES = ['grid', 'tree', 'form'] as const;

/** Example records (plain objects, at most 1,000) or CSV text (checked further when parsed). */
function IsSamples(): PropertyDecorator {
  return ValidateBy({
    name: 'isSamples',
    validator: {
      validate: (value: unknown) =>
        typeof value === 'string' ||
        (Array.isArray(value) &&
          value.length <= CSV_SAMPLE_LIMITS.records &&
          value.every((item) => typeof item === 'object' && item !== null && !Array.isArray(item))),
      defaultMessage: buildMessage(
        (each) =>
          `${each}$property must be CSV text or an array of at most ${CSV_SAMPLE_LIMITS.records} objects`,
      ),
    },
  });
}

export class GenerateConfigDto {
  @ApiPropertyOptional({
    description: 'What the form is for; the `infer` provider uses its first line as the title',
    example: 'Event registration',
    maxLength: 4000,
  })
  @IsOptional()
  @IsString()
  @Length(1, 4000)
  prompt?: string;

  @ApiPropertyOptional({
    description: `Example records, or CSV text with a header row (comma, semicolon or tab separated; a header \`address.city\` makes a nested object). At most ${CSV_SAMPLE_LIMITS.records} records and ${CSV_SAMPLE_LIMITS.bytes} bytes of CSV.`,
    oneOf: [{ type: 'array', items: FREE_OBJECT }, { type: 'string' }],
    example: 'name,email,age\nAnn,ann@example.com,34\nBob,bob@example.com,41',
  })
  @IsOptional()
  @IsSamples()
  samples?: Record<string, unknown>[] | string;

  @ApiPropertyOptional({ enum: CONFIG_TYPES, description: 'Default: form' })
  @IsOptional()
  @IsIn(CONFIG_TYPES)
  type?: ConfigType;

  @ApiPropertyOptional({ description: 'Title of the draft (default: from the prompt)', maxLength: 200 })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  title?: string;

  @ApiPropertyOptional({
    enum: SUPPORTED_LOCALES,
    description: 'Language of the draft and its warnings (default: the request language)',
  })
  @IsOptional()
  @IsIn(SUPPORTED_LOCALES)
  locale?: (typeof SUPPORTED_LOCALES)[number];

  @ApiPropertyOptional({ description: 'Also create the configuration (answers 201); default false' })
  @IsOptional()
  @IsBoolean()
  save?: boolean;
}

export class DraftWarningDto {
  @ApiProperty({ example: 'ENUM_FROM_SAMPLES' }) code: string;
  @ApiPropertyOptional({ example: 'status' }) field?: string;
  @ApiProperty() message: string;
}

/** A configuration body exactly as `POST /api/configs` accepts it. */
export class ConfigDraftDto {
  @ApiProperty() title: string;
  @ApiProperty({ enum: CONFIG_TYPES }) type: ConfigType;
  @ApiProperty({ type: [String] }) tags: string[];
  @ApiProperty({ nullable: true, type: String }) description: string | null;
  @ApiProperty({ ...FREE_OBJECT, nullable: true }) schema: Record<string, unknown> | null;
  @ApiProperty({ type: [ValidationRuleDto] }) validationRules: ValidationRuleDto[];
  @ApiProperty({ type: [ComputedRuleDto] }) computedRules: ComputedRuleDto[];
  @ApiProperty({ type: PreferencesDto }) preferences: PreferencesDto;
}

export class GeneratedConfigDto extends ConfigDraftDto {
  @ApiProperty({ example: 'infer', description: 'The provider that made the draft (AI_PROVIDER)' })
  provider: string;

  @ApiProperty({ type: [DraftWarningDto] }) warnings: DraftWarningDto[];
}

export class SavedGeneratedConfigDto extends ConfigResponseDto {
  @ApiProperty({ example: 'infer' }) provider: string;
  @ApiProperty({ type: [DraftWarningDto] }) warnings: DraftWarningDto[];
}
