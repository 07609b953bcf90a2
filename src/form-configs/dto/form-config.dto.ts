import { ApiProperty, ApiPropertyOptional, PartialType } from '@nestjs/swagger';
import { LocaleQueryDto } from '../../common/http/locale-query.dto';
import { IsFieldPath } from '../../common/validation/field-path';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  Length,
  Max,
  MaxLength,
  Min,
  ValidateIf,
  ValidateNested,
  IsDefined,
} from 'class-validator';

const CONFIG_TYPES = ['grid', 'tree', 'form'] as const;
export type ConfigType = (typeof CONFIG_TYPES)[number];

export class PreferencesDto {
  @ApiPropertyOptional({
    type: Number,
    nullable: true,
    example: 1,
    description: 'Max active records per user; null = unlimited',
  })
  @IsOptional()
  @ValidateIf((_, value) => value !== null)
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  saveLimit?: number | null;

  @ApiPropertyOptional({ default: true }) @IsOptional() @IsBoolean() allowEdit?: boolean;
  @ApiPropertyOptional({ default: true }) @IsOptional() @IsBoolean() allowDelete?: boolean;
  @ApiPropertyOptional({ default: false }) @IsOptional() @IsBoolean() storeComputedResults?: boolean;
}

export class ValidationRuleDto {
  @ApiProperty({ example: 'adult' }) @IsString() @Length(1, 100) name: string;

  @ApiProperty({
    description: 'JSONLogic; the record is valid when it is truthy',
    example: { '>=': [{ var: 'age' }, 18] },
  })
  @IsDefined()
  rule: unknown;

  @ApiPropertyOptional({
    example: 'age',
    description: 'The field the error is reported on (default: the rule name)',
  })
  @IsOptional()
  @IsString()
  @IsFieldPath()
  field?: string;

  @ApiProperty({
    description: 'An i18n key or a message per language',
    oneOf: [{ type: 'string' }, { type: 'object', additionalProperties: { type: 'string' } }],
    example: { en: 'Must be an adult', hu: 'Nagykorúnak kell lennie' },
  })
  @IsDefined()
  message: string | Record<string, string>;
}

export class ComputedRuleDto {
  @ApiProperty({ example: 'total' }) @IsString() @IsFieldPath() field: string;

  @ApiProperty({
    description: 'JSONLogic computing the value',
    example: { '*': [{ var: 'qty' }, { var: 'price' }] },
  })
  @IsDefined()
  expression: unknown;
}

export class CreateConfigDto {
  @ApiProperty({ example: 'Event registration' }) @IsString() @Length(1, 200) title: string;

  @ApiProperty({ enum: CONFIG_TYPES, example: 'form' }) @IsIn(CONFIG_TYPES) type: ConfigType;

  @ApiPropertyOptional({ type: [String], example: ['events', 'public'] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(50)
  @IsString({ each: true })
  @Length(1, 50, { each: true })
  tags?: string[];

  @ApiPropertyOptional({ format: 'uuid', nullable: true, type: String })
  @IsOptional()
  @ValidateIf((_, value) => value !== null)
  @IsUUID()
  siteId?: string | null;

  @ApiPropertyOptional({ nullable: true, type: String })
  @IsOptional()
  @ValidateIf((_, value) => value !== null)
  @IsString()
  @MaxLength(5000)
  description?: string | null;

  @ApiPropertyOptional({
    description: 'JSON Schema (2020-12) of the submitted data',
    example: {
      type: 'object',
      required: ['name'],
      properties: { name: { type: 'string' }, age: { type: 'integer' } },
    },
  })
  @IsOptional()
  @ValidateIf((_, value) => value !== null)
  @IsObject()
  schema?: Record<string, unknown> | null;

  @ApiPropertyOptional({ type: [ValidationRuleDto] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(200)
  @ValidateNested({ each: true })
  @Type(() => ValidationRuleDto)
  validationRules?: ValidationRuleDto[];

  @ApiPropertyOptional({ type: [ComputedRuleDto] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(200)
  @ValidateNested({ each: true })
  @Type(() => ComputedRuleDto)
  computedRules?: ComputedRuleDto[];

  @ApiPropertyOptional({ type: PreferencesDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => PreferencesDto)
  preferences?: PreferencesDto;

  @ApiPropertyOptional({ description: "The client's layout, stored as is" })
  @IsOptional()
  definition?: unknown;
}

/** A PUT replaces the fields it names; omitted fields keep their value. */
export class UpdateConfigDto extends PartialType(CreateConfigDto) {}

export class ListConfigsQueryDto extends LocaleQueryDto {
  @ApiPropertyOptional({ enum: CONFIG_TYPES }) @IsOptional() @IsIn(CONFIG_TYPES) type?: ConfigType;

  @ApiPropertyOptional({
    description: 'Comma-separated tags; a configuration must carry every one',
    example: 'events,public',
  })
  @IsOptional()
  @IsString()
  @MaxLength(1000)
  tags?: string;
}

export class ConfigSummaryDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() title: string;
  @ApiProperty({ enum: CONFIG_TYPES }) type: string;
  @ApiProperty({ type: [String] }) tags: string[];
}

export class ConfigListDto {
  @ApiProperty({ type: [ConfigSummaryDto] }) data: ConfigSummaryDto[];
  @ApiProperty({ example: 1 }) totalCount: number;
}

export class ConfigResponseDto extends ConfigSummaryDto {
  @ApiProperty({ format: 'uuid', nullable: true, type: String }) siteId: string | null;
  @ApiProperty({ nullable: true, type: String }) description: string | null;
  @ApiProperty({ nullable: true, type: Object }) schema: Record<string, unknown> | null;
  @ApiProperty({ type: [ValidationRuleDto] }) validationRules: ValidationRuleDto[];
  @ApiProperty({ type: [ComputedRuleDto] }) computedRules: ComputedRuleDto[];
  @ApiProperty({ type: PreferencesDto }) preferences: PreferencesDto;
  @ApiProperty({ nullable: true }) definition: unknown;
  @ApiProperty() isActive: boolean;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
}
