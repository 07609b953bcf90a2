import { Type } from 'class-transformer';
import {
  IsIn,
  IsInt,
  IsNotEmpty,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateBy,
  ValidateNested,
  type ValidationOptions,
} from 'class-validator';
import type { HttpMethod } from '../../../common/outbound-http';
import { urlOriginProblem } from './url-template';

export const API_METHODS: readonly HttpMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
export const MAX_API_RESPONSE_BYTES = 50 * 1024 * 1024;

/** `http://...`, `https://...`, or a template that renders to one (checked again when sent). */
const URL_PATTERN = /^(?:https?:\/\/|\{\{)/i;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An object whose every value is a string (header values may hold templates). */
function IsStringRecord(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isStringRecord',
      validator: {
        validate: (value: unknown) =>
          isPlainObject(value) && Object.values(value).every((v) => typeof v === 'string'),
        defaultMessage: () => '$property must be an object of strings',
      },
    },
    options,
  );
}

/** A URL template whose origin comes only from literal text or env (see `urlOriginProblem`). */
function HasFixedOrigin(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'urlOrigin',
      validator: {
        validate: (value: unknown) => typeof value !== 'string' || urlOriginProblem(value) === null,
        defaultMessage: (args) => `$property: ${urlOriginProblem(String(args?.value))}`,
      },
    },
    options,
  );
}

/** A string (a template or raw text) or an object (sent as JSON). */
function IsStringOrObject(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isStringOrObject',
      validator: {
        validate: (value: unknown) => typeof value === 'string' || isPlainObject(value),
        defaultMessage: () => '$property must be a string or an object',
      },
    },
    options,
  );
}

/** The request sent when a rolled-back run undoes an `api` step; templates may read `result`. */
export class ApiCompensateConfig {
  @IsIn(API_METHODS) method: HttpMethod;

  @IsString()
  @IsNotEmpty()
  @MaxLength(8192)
  @Matches(URL_PATTERN, { message: '$property must be an http(s) URL' })
  @HasFixedOrigin()
  url: string;

  @IsOptional() @IsStringRecord() headers?: Record<string, string>;

  @IsOptional() @IsStringOrObject() payload?: string | Record<string, unknown>;
}

/** The `config` of an `api` step (url, method, headers, payload). */
export class ApiStepConfig {
  @IsString()
  @IsNotEmpty()
  @MaxLength(8192)
  @Matches(URL_PATTERN, { message: '$property must be an http(s) URL' })
  @HasFixedOrigin()
  url: string;

  @IsOptional() @IsIn(API_METHODS) method?: HttpMethod = 'GET';

  @IsOptional() @IsStringRecord() headers?: Record<string, string>;

  @IsOptional() @IsStringOrObject() payload?: string | Record<string, unknown>;

  /** Default WORKFLOW_API_TIMEOUT_MS. */
  @IsOptional() @IsInt() @Min(1) @Max(60_000) timeoutMs?: number;

  /** Default 5 MB. */
  @IsOptional() @IsInt() @Min(1) @Max(MAX_API_RESPONSE_BYTES) maxResponseBytes?: number;

  @IsOptional() @ValidateNested() @Type(() => ApiCompensateConfig) compensate?: ApiCompensateConfig;
}
