import { ApiProperty, ApiPropertyOptional, PartialType } from '@nestjs/swagger';
import { FREE_OBJECT, JSON_VALUE } from '../../common/http/openapi-schemas';
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
  Length,
  Max,
  MaxLength,
  Min,
  ValidateIf,
  ValidateNested,
  IsDefined,
} from 'class-validator';
import { OptionalIdField, OptionalTagsField } from '../../common/validation/dto-fields';

const CONFIG_TYPES = ['grid', 'tree', 'form'] as const;
export type ConfigType = (typeof CONFIG_TYPES)[number];

export class PreferencesDto {
  @ApiPropertyOptional({
    type: Number,
    nullable: true,
    example: 10,
    description: 'Max active records per user; null = unlimited',
  })
  @IsOptional()
  @ValidateIf((_, value) => value !== null)
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  saveLimit?: number | null;

  @ApiPropertyOptional({ description: 'Default: true' }) @IsOptional() @IsBoolean() allowEdit?: boolean;
  @ApiPropertyOptional({ description: 'Default: true' }) @IsOptional() @IsBoolean() allowDelete?: boolean;
  @ApiPropertyOptional({ description: 'Default: false' })
  @IsOptional()
  @IsBoolean()
  storeComputedResults?: boolean;
}

export class ValidationRuleDto {
  @ApiProperty({ example: 'maxQty' }) @IsString() @Length(1, 100) name: string;

  @ApiProperty({
    ...JSON_VALUE,
    description: 'JSONLogic; the record is valid when it is truthy',
    example: { '<=': [{ var: 'qty' }, 100] },
  })
  @IsDefined()
  rule: unknown;

  @ApiPropertyOptional({
    example: 'qty',
    description: 'The field the error is reported on (default: the rule name)',
  })
  @IsOptional()
  @IsString()
  @IsFieldPath()
  field?: string;

  @ApiProperty({
    description: 'An i18n key or a message per language',
    oneOf: [{ type: 'string' }, { type: 'object', additionalProperties: { type: 'string' } }],
    example: { en: 'At most 100 pieces', hu: 'Legfeljebb 100 darab' },
  })
  @IsDefined()
  message: string | Record<string, string>;
}

export class ComputedRuleDto {
  @ApiProperty({ example: 'total' }) @IsString() @IsFieldPath() field: string;

  @ApiProperty({
    ...JSON_VALUE,
    description: 'JSONLogic computing the value',
    example: { '*': [{ var: 'qty' }, { var: 'price' }] },
  })
  @IsDefined()
  expression: unknown;
}

export class CreateConfigDto {
  @ApiProperty({ example: 'Order form' }) @IsString() @Length(1, 200) title: string;

  @ApiProperty({ enum: CONFIG_TYPES, example: 'form' }) @IsIn(CONFIG_TYPES) type: ConfigType;

  @OptionalTagsField(['orders', 'public'])
  tags?: string[];

  @OptionalIdField(
    'The site it belongs to; null = shared by every site; only admins choose (others write in their own site: omitted means it, another site or null is 403 SITE_FORBIDDEN)',
  )
  siteId?: string | null;

  @ApiPropertyOptional({ nullable: true, type: String, example: 'Orders taken at the counter' })
  @IsOptional()
  @ValidateIf((_, value) => value !== null)
  @IsString()
  @MaxLength(5000)
  description?: string | null;

  @ApiPropertyOptional({
    ...FREE_OBJECT,
    nullable: true,
    description: 'JSON Schema (2020-12) of the submitted data',
    example: {
      type: 'object',
      required: ['name', 'qty'],
      properties: {
        name: { type: 'string', minLength: 1 },
        email: { type: 'string', format: 'email' },
        qty: { type: 'integer', minimum: 1 },
        price: { type: 'number', minimum: 0 },
        city: { type: 'string' },
      },
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

  @ApiPropertyOptional({
    ...JSON_VALUE,
    nullable: true,
    description: "The client's layout, stored as is",
    example: { layout: [{ field: 'name' }, { field: 'qty' }, { field: 'price' }] },
  })
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
  @ApiProperty({ ...FREE_OBJECT, nullable: true }) schema: Record<string, unknown> | null;
  @ApiProperty({ type: [ValidationRuleDto] }) validationRules: ValidationRuleDto[];
  @ApiProperty({ type: [ComputedRuleDto] }) computedRules: ComputedRuleDto[];
  @ApiProperty({ type: PreferencesDto }) preferences: PreferencesDto;
  @ApiProperty({ ...JSON_VALUE, nullable: true }) definition: unknown;
  @ApiProperty() isActive: boolean;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
  @ApiProperty({
    example: 2,
    description:
      'Rises by one with every update, restore and the delete; the ETag `"<version>"`, to send back as If-Match; ' +
      'each version but a deletion is kept (`GET /api/configs/:configId/versions`)',
  })
  version: number;
}
