import { EVENT_TYPES } from '../../events/domain-event';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { FREE_OBJECT, JSON_VALUE } from '../../common/http/openapi-schemas';
import { RUN_STATUSES, STEP_STATUSES, type RunStatus, type StepStatus } from '../engine/model/run-model';
import { WORKFLOW_TYPES, WorkflowConfigDto, WorkflowPermissionsDto } from './workflow-definition.dto';

export class WorkflowResponseDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty({ nullable: true, type: String }) alias: string | null;
  @ApiProperty({ nullable: true, type: String }) description: string | null;
  @ApiProperty({ enum: WORKFLOW_TYPES }) type: string;
  @ApiProperty({ type: WorkflowConfigDto }) config: Record<string, unknown>;
  @ApiProperty({ type: WorkflowPermissionsDto }) permissions: { roles: string[]; users: string[] };
  @ApiProperty({ type: [String] }) tags: string[];
  @ApiProperty({ format: 'uuid', nullable: true, type: String }) siteId: string | null;
  @ApiProperty() isActive: boolean;
  @ApiProperty({
    example: 1,
    description:
      'Rises by one at every update and the delete; a run keeps the version it ran with. The ETag `"<version>"`, ' +
      'to send back as If-Match',
  })
  version: number;
  @ApiProperty({
    format: 'uuid',
    nullable: true,
    type: String,
    description:
      'Who last saved the definition (create, or an update with `config`): a trigger with `runAs: "author"` runs as them',
  })
  authorId: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
}

export class WorkflowListDto {
  @ApiProperty({ type: [WorkflowResponseDto] }) data: WorkflowResponseDto[];
  @ApiProperty({ example: 1 }) totalCount: number;
}

export class AttemptLogDto {
  @ApiProperty() attempt: number;
  @ApiProperty({ enum: ['success', 'failed'] }) status: 'success' | 'failed';
  @ApiProperty({ description: 'Wait before this attempt, ms' }) delayMs: number;
  @ApiProperty() durationMs: number;
  @ApiPropertyOptional() error?: string;
}

export class StepErrorDto {
  @ApiProperty() code: string;
  @ApiProperty() message: string;
  @ApiPropertyOptional(JSON_VALUE) details?: unknown;
}

export class StepLogDto {
  @ApiProperty() name: string;
  @ApiProperty() type: string;
  @ApiProperty({ enum: STEP_STATUSES }) status: StepStatus;
  @ApiProperty({
    ...JSON_VALUE,
    nullable: true,
    description: "The step's result (null when it did not produce one)",
  })
  result: unknown;
  @ApiPropertyOptional({ type: StepErrorDto }) error?: StepErrorDto;
  @ApiProperty() attempts: number;
  @ApiProperty() durationMs: number;
  @ApiPropertyOptional({ type: [AttemptLogDto] }) attemptLog?: AttemptLogDto[];
  @ApiPropertyOptional({ ...JSON_VALUE, description: 'What the rollback did for this step' })
  compensation?: unknown;
  @ApiPropertyOptional({
    description: 'A re-run took this step as the run it re-runs left it (not run again, no effect repeated)',
  })
  reused?: boolean;
}

export class WorkflowResultDto {
  @ApiProperty() success: boolean;
  @ApiProperty({ example: 'Workflow completed' }) message: string;
  @ApiProperty({ format: 'uuid' }) workflowId: string;
  @ApiProperty() workflowName: string;
  @ApiProperty({
    format: 'uuid',
    nullable: true,
    type: String,
    description: 'null for a dry run (nothing stored)',
  })
  runId: string | null;
  @ApiProperty({ enum: RUN_STATUSES, example: 'success' }) status: RunStatus;
  @ApiProperty({ type: [StepLogDto] }) steps: StepLogDto[];
  @ApiProperty({ ...FREE_OBJECT, nullable: true, description: 'The saved data record' }) data: unknown;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: "Each step's result under its name",
  })
  results: Record<string, unknown>;
}

export const EFFECT_STATES = ['pending', 'sent', 'failed'] as const;

export class RunEffectErrorDto {
  @ApiProperty() code: string;
  @ApiProperty() message: string;
}

export class RunEffectDto {
  @ApiProperty({ description: 'The step that asked for the effect' }) step: string;
  @ApiProperty({ example: 'mail' }) kind: string;
  @ApiProperty({ enum: EFFECT_STATES }) state: string;
  @ApiProperty({ description: 'Delivery attempts so far' }) attempts: number;
  @ApiProperty({ type: RunEffectErrorDto, nullable: true }) lastError: RunEffectErrorDto | null;
}

export class WaitingForDto {
  @ApiProperty({ example: 'approve' }) step: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String, description: 'When the timeout decides' })
  until: string | null;
}

export class RunTriggerDto {
  @ApiProperty({
    format: 'uuid',
    description: 'The event id (a webhook delivery of it carries the same `webhook-id`)',
  })
  eventId: string;
  @ApiProperty({ enum: EVENT_TYPES }) event: string;
  @ApiProperty({ description: '1 for a change made through a route; n+1 for one made by a run at depth n' })
  depth: number;
  @ApiProperty({
    format: 'uuid',
    description: "The chain's root event: the change made outside any triggered run (eventId at depth 1)",
  })
  rootEventId: string;
  @ApiProperty({
    type: [String],
    description:
      "The workflows the chain passed through, this run's last; none of them is triggered again by it",
  })
  chain: string[];
}

export class WorkflowRunDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) workflowId: string;
  @ApiProperty({ format: 'uuid', nullable: true, type: String }) userId: string | null;
  @ApiProperty({ format: 'uuid', nullable: true, type: String }) configId: string | null;
  @ApiProperty({
    format: 'uuid',
    nullable: true,
    type: String,
    description: 'The record the run created (kept when a rollback deactivated it)',
  })
  dataId: string | null;
  @ApiProperty({ description: 'The record of dataId was deactivated by a rollback' })
  dataCompensated: boolean;
  @ApiProperty({ enum: RUN_STATUSES }) status: string;
  @ApiProperty({ nullable: true, type: String }) message: string | null;
  @ApiProperty({ type: [StepLogDto] }) steps: unknown[];
  @ApiProperty() durationMs: number;
  @ApiProperty({ format: 'date-time' }) startedAt: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) finishedAt: string | null;
  @ApiProperty({
    nullable: true,
    type: Number,
    description: 'The version of the definition the run ran with (null: a run older than versions)',
  })
  definitionVersion: number | null;
  @ApiProperty({ format: 'uuid', nullable: true, type: String, description: 'The run this one re-runs' })
  rerunOf: string | null;
  @ApiProperty({
    type: RunTriggerDto,
    nullable: true,
    description: 'The event that queued this run (a workflow trigger); null for a run started by a request',
  })
  trigger: RunTriggerDto | null;
  @ApiProperty({
    type: WaitingForDto,
    nullable: true,
    description: 'Where a `waiting` run waits for a decision (null for any other status)',
  })
  waitingFor: WaitingForDto | null;
  @ApiProperty({
    type: [RunEffectDto],
    description: 'What the run committed to after its steps (mail) and how its delivery went',
  })
  effects: RunEffectDto[];
}

export class WorkflowRunPageDto {
  @ApiProperty({ type: [WorkflowRunDto] }) data: WorkflowRunDto[];
  @ApiProperty() totalCount: number;
  @ApiProperty() page: number;
  @ApiProperty() pages: number;
}

export class QueuedRunDto {
  @ApiProperty({ format: 'uuid' }) runId: string;
  @ApiProperty({ enum: ['queued'] }) status: 'queued';
}
