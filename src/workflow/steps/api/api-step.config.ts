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
  ValidateIf,
  ValidateNested,
  type ValidationArguments,
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

export const API_FILE_MODES = ['body', 'multipart'] as const;
export type ApiFileMode = (typeof API_FILE_MODES)[number];
/** The methods that send a body: a step with `file` uses one of them. */
export const API_FILE_METHODS: readonly HttpMethod[] = ['POST', 'PUT', 'PATCH'];
export const DEFAULT_FILE_PART_NAME = 'file';
export const DEFAULT_DATA_PART_NAME = 'data';

/** A multipart part name: nothing a header parameter would need to escape (no quotes, no line breaks). */
const PART_NAME = /^[A-Za-z0-9_.[\]-]{1,100}$/;

/** A part name given only where there are parts: `as: multipart`. */
function OnlyForMultipart(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'onlyForMultipart',
      validator: {
        validate: (_value: unknown, args?: ValidationArguments) =>
          (args?.object as ApiFileConfig | undefined)?.as === 'multipart',
        defaultMessage: () => '$property is only for "as": "multipart"',
      },
    },
    options,
  );
}

/**
 * `file`: a file of the run's record (savedData) sent as the request body itself, or as a part of a
 * multipart/form-data body (with the rendered `payload`, if any, as another part).
 */
export class ApiFileConfig {
  /** The attachment field whose file is sent, as named in the form's schema (no template). */
  @IsString()
  @Matches(/^[^{}]{1,200}$/, { message: '$property must be a field name (1-200 characters, no template)' })
  field: string;

  @IsIn(API_FILE_MODES) as: ApiFileMode;

  /** `multipart` only: the file part's name; default `file`. */
  @ValidateIf((o: ApiFileConfig) => o.partName !== undefined)
  @OnlyForMultipart()
  @Matches(PART_NAME, { message: '$property must be 1-100 letters, digits or _ . - [ ]' })
  partName?: string;

  /** `multipart` only: the name of the part that carries `payload`; default `data`. */
  @ValidateIf((o: ApiFileConfig) => o.dataPartName !== undefined)
  @OnlyForMultipart()
  @Matches(PART_NAME, { message: '$property must be 1-100 letters, digits or _ . - [ ]' })
  dataPartName?: string;
}

/** What a step's other options say against its `file`, or null. */
export function fileConflict(config: Partial<ApiStepConfig>): string | null {
  const file = config.file;
  if (!isPlainObject(file)) return null;
  if (!API_FILE_METHODS.includes(config.method ?? 'GET'))
    return 'file needs method POST, PUT or PATCH (the file is sent as the request body)';
  const hasContentType = Object.keys(config.headers ?? {}).some(
    (name) => name.toLowerCase() === 'content-type',
  );
  if (file.as === 'body' && config.payload !== undefined)
    return 'file with "as": "body" sends the file alone: leave payload out, or use "as": "multipart"';
  if (file.as === 'multipart' && hasContentType)
    return 'file with "as": "multipart" sets its own Content-Type (with the boundary): leave it out of headers';
  if (
    file.as === 'multipart' &&
    (file.partName ?? DEFAULT_FILE_PART_NAME) === (file.dataPartName ?? DEFAULT_DATA_PART_NAME)
  )
    return 'file: partName and dataPartName must differ';
  return null;
}

/** `file` fits the step's method, headers and payload (see `fileConflict`). */
function FitsRequest(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'apiFile',
      validator: {
        validate: (_value: unknown, args?: ValidationArguments) =>
          fileConflict(args?.object as ApiStepConfig) === null,
        defaultMessage: (args) => String(fileConflict(args?.object as ApiStepConfig)),
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

/** The `config` of an `api` step (url, method, headers, payload, file). */
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

  /** A file of the run's record to send (see ApiFileConfig); the result stays `{status, data}`. */
  @IsOptional()
  @ValidateNested()
  @Type(() => ApiFileConfig)
  @FitsRequest()
  file?: ApiFileConfig;
}
