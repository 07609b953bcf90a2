import { CheckedAsSent } from '../../common/http/validation.pipe';
import { ApiHideProperty, ApiProperty, ApiPropertyOptional, PartialType } from '@nestjs/swagger';
import { FREE_OBJECT } from '../../common/http/openapi-schemas';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsDefined,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  Length,
  Matches,
  Max,
  MaxLength,
  Min,
  Validate,
  ValidateIf,
  ValidateNested,
  ValidatorConstraint,
  type ValidationArguments,
  type ValidatorConstraintInterface,
} from 'class-validator';
import { EVENT_TYPES, type EventType } from '../../events/domain-event';
import { BACKOFFS, type Backoff } from '../engine/driver/retry-policy';
import { OptionalIdField, OptionalTagsField } from '../../common/validation/dto-fields';
import { isUuid } from '../../common/validation/is-uuid';
import type { RunAs } from '../triggers/trigger-matching';

export const WORKFLOW_TYPES = ['save', 'validate', 'export', 'import', 'notification', 'custom'] as const;
export const ON_ERROR_STRATEGIES = ['stop', 'continue', 'rollback'] as const;
export type OnErrorStrategy = (typeof ON_ERROR_STRATEGIES)[number];
export const MAX_WORKFLOW_STEPS = 50;
export const MAX_WORKFLOW_TRIGGERS = 20;
const STEP_NAME = /^[A-Za-z0-9_][A-Za-z0-9_-]*$/;

export class RetryDto {
  @ApiPropertyOptional({ description: 'Default: false', example: true })
  @IsOptional()
  @IsBoolean()
  enabled?: boolean;
  @ApiPropertyOptional({ minimum: 1, maximum: 10, description: 'Default: 3', example: 3 })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(10)
  maxAttempts?: number;
  @ApiPropertyOptional({ enum: BACKOFFS, description: 'Default: exponential' })
  @IsOptional()
  @IsIn(BACKOFFS)
  backoff?: Backoff;
  @ApiPropertyOptional({ description: 'Base delay in ms (default 1000)', maximum: 60000, example: 1000 })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(60_000)
  delayMs?: number;
  @ApiPropertyOptional({
    description: 'Longest wait between attempts in ms (default 30000)',
    example: 30000,
    maximum: 300000,
  })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(300_000)
  maxDelayMs?: number;
}

export class ErrorHandlingDto {
  @ApiPropertyOptional({ enum: ON_ERROR_STRATEGIES, description: 'Default: stop' })
  @IsOptional()
  @IsIn(ON_ERROR_STRATEGIES)
  strategy?: OnErrorStrategy;
  @ApiPropertyOptional({
    description: 'E-mail ADMIN_NOTIFY_EMAIL when a run fails (default false)',
    example: false,
  })
  @IsOptional()
  @IsBoolean()
  notify?: boolean;
}

export class WorkflowStepDto {
  @ApiProperty({ example: 'save', description: 'Unique in the workflow; the result is stored under it' })
  @IsString()
  @Length(1, 100)
  @Matches(STEP_NAME, { message: 'name may contain letters, digits, _ and -' })
  name: string;

  @ApiProperty({
    example: 'save',
    description: 'validate, save, notify, api, transform, conditional or a custom type',
  })
  @IsString()
  @Length(1, 100)
  type: string;

  @ApiPropertyOptional({
    ...FREE_OBJECT,
    description: 'Depends on the type',
    example: { configId: '{{input.configId}}' },
  })
  @IsOptional()
  @IsObject()
  config?: Record<string, unknown>;

  @ApiPropertyOptional({ enum: ON_ERROR_STRATEGIES })
  @IsOptional()
  @IsIn(ON_ERROR_STRATEGIES)
  onError?: OnErrorStrategy;

  @ApiPropertyOptional({
    description:
      'A dotted path (`validationResult.valid`, `input.kind.equals.vip`, `!input.skip`) or JSONLogic',
    oneOf: [{ type: 'string' }, FREE_OBJECT],
  })
  @IsOptional()
  @IsDefined()
  condition?: string | Record<string, unknown>;

  @ApiPropertyOptional({
    description: 'Longest time one attempt of this step may take, ms',
    example: 10000,
    maximum: 3600000,
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(3_600_000)
  timeoutMs?: number;

  @ApiPropertyOptional({
    type: RetryDto,
    description: "Overrides the workflow's retry settings for this step",
  })
  @IsOptional()
  @ValidateNested()
  @Type(() => RetryDto)
  retry?: RetryDto;
}

/** `owner`, `author`, or `{user: <uuid>}` and nothing else. */
@ValidatorConstraint({ name: 'runAs' })
class RunAsConstraint implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    if (value === 'owner' || value === 'author') return true;
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
    const keys = Object.keys(value);
    const user = (value as { user?: unknown }).user;
    return keys.length === 1 && typeof user === 'string' && isUuid(user);
  }
  defaultMessage(args: ValidationArguments): string {
    return `${args.property} must be "owner", "author" or {"user": "<user id>"}`;
  }
}

export class WorkflowTriggerDto {
  @ApiProperty({ enum: EVENT_TYPES, example: 'record.created', description: 'The event that queues a run' })
  @IsIn(EVENT_TYPES)
  event: EventType;

  @ApiPropertyOptional({
    format: 'uuid',
    description: "Only events of this configuration (a record's form; a finished run's configId)",
  })
  @IsOptional()
  @IsUUID()
  configId?: string;

  @ApiPropertyOptional({
    description:
      "Whom the run runs as (checked as an execute by that user): `owner` (default) the record's owner (a finished run: its user), `author` who last saved this definition, `{user: <id>}` a named user (only an admin may name anybody but themselves)",
    oneOf: [
      { type: 'string', enum: ['owner', 'author'] },
      { type: 'object', properties: { user: { type: 'string', format: 'uuid' } }, required: ['user'] },
    ],
    example: 'owner',
  })
  @IsOptional()
  @Validate(RunAsConstraint)
  runAs?: RunAs;
}

export class WorkflowConfigDto {
  @ApiProperty({
    type: [WorkflowStepDto],
    description: 'Run in order; each result is stored under the step name',
    example: [
      { name: 'check', type: 'validate' },
      { name: 'store', type: 'save', onError: 'rollback' },
      { name: 'shape', type: 'transform', config: { mapping: { customer: 'name', pieces: 'qty' } } },
    ],
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_WORKFLOW_STEPS)
  @ValidateNested({ each: true })
  @Type(() => WorkflowStepDto)
  steps: WorkflowStepDto[];

  @ApiPropertyOptional({ type: ErrorHandlingDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => ErrorHandlingDto)
  errorHandling?: ErrorHandlingDto;

  @ApiPropertyOptional({ type: RetryDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => RetryDto)
  retry?: RetryDto;

  @ApiPropertyOptional({
    description: 'Longest time a whole run may take, ms (default 300000, 5 minutes)',
    example: 300000,
  })
  @IsOptional()
  @IsInt()
  @Min(1000)
  @Max(86_400_000)
  timeoutMs?: number;

  @ApiPropertyOptional({
    description: 'Most runs of this workflow running at once from the queue (the rest wait)',
    example: 4,
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(1000)
  concurrency?: number;

  @ApiPropertyOptional({
    type: [WorkflowTriggerDto],
    description:
      "Events that queue a run of this workflow, as the trigger's `runAs` user, with the record as `input` and `savedData` (a finished run: the run as `input`)",
    example: [{ event: 'record.created' }],
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_WORKFLOW_TRIGGERS)
  @ValidateNested({ each: true })
  @Type(() => WorkflowTriggerDto)
  triggers?: WorkflowTriggerDto[];
}

export class WorkflowPermissionsDto {
  @ApiPropertyOptional({ type: [String], example: ['user', 'manager'] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  @IsString({ each: true })
  @Length(1, 50, { each: true })
  roles?: string[];

  @ApiPropertyOptional({ type: [String], description: 'User ids', example: [] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(1000)
  @IsUUID('all', { each: true })
  users?: string[];
}

export class CreateWorkflowDto {
  @ApiProperty({ example: 'Order intake' }) @IsString() @Length(1, 200) name: string;

  @ApiPropertyOptional({ nullable: true, type: String, example: 'orders' })
  @IsOptional()
  @ValidateIf((_, value) => value !== null)
  @IsString()
  @Length(1, 100)
  alias?: string | null;

  @ApiPropertyOptional({ nullable: true, type: String, example: 'Validates, stores and reshapes an order' })
  @IsOptional()
  @ValidateIf((_, value) => value !== null)
  @IsString()
  @MaxLength(5000)
  description?: string | null;

  @ApiProperty({ enum: WORKFLOW_TYPES, example: 'save' }) @IsIn(WORKFLOW_TYPES) type: string;

  @ApiProperty({ type: WorkflowConfigDto })
  @ValidateNested()
  @Type(() => WorkflowConfigDto)
  config: WorkflowConfigDto;

  @ApiPropertyOptional({ type: WorkflowPermissionsDto, description: 'Who may run it besides admins' })
  @IsOptional()
  @ValidateNested()
  @Type(() => WorkflowPermissionsDto)
  permissions?: WorkflowPermissionsDto;

  @OptionalTagsField(['orders'])
  tags?: string[];

  @OptionalIdField(
    'The site it belongs to; null = every site; only admins choose (others write in their own site: omitted means it, another site or null is 403 SITE_FORBIDDEN)',
  )
  siteId?: string | null;

  @ApiPropertyOptional({
    description: 'false deactivates the workflow (as DELETE does); default true',
    example: true,
  })
  @IsOptional()
  @IsBoolean()
  isActive?: boolean;
}

/** A PUT replaces the fields it names; omitted fields keep their value. */
export class UpdateWorkflowDto extends PartialType(CreateWorkflowDto) {}

export class ListWorkflowsQueryDto {
  @ApiPropertyOptional({ enum: WORKFLOW_TYPES }) @IsOptional() @IsIn(WORKFLOW_TYPES) type?: string;

  @ApiPropertyOptional({ description: 'Comma-separated tags; a workflow must carry every one' })
  @IsOptional()
  @IsString()
  @MaxLength(1000)
  tags?: string;

  @ApiPropertyOptional({
    enum: ['true', 'false'],
    description: 'Admins may list deactivated workflows with false; default true',
  })
  @IsOptional()
  @IsIn(['true', 'false'])
  isActive?: 'true' | 'false';

  @ApiPropertyOptional({ enum: ['en', 'hu'] }) @IsOptional() @IsString() lang?: string;
  @ApiPropertyOptional({ enum: ['en', 'hu'] }) @IsOptional() @IsString() locale?: string;
  @ApiHideProperty() @IsOptional() @IsString() _?: string;
}

@CheckedAsSent()
export class ExecuteWorkflowDto {
  @ApiProperty({ format: 'uuid', description: 'The configuration the run works on' })
  @IsUUID()
  configId: string;

  @ApiProperty({ type: 'object', additionalProperties: true, example: { name: 'Jane', qty: 2 } })
  @IsObject()
  data: Record<string, unknown>;
}
