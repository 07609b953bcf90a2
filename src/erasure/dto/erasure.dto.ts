import { ApiProperty } from '@nestjs/swagger';
import { ValidateBy } from 'class-validator';
import { IsFieldPath } from '../../common/validation/field-path';
import { ERASURE_STEPS, type ErasureKind } from '../erasure-steps';

/** `value` is a string, a number or a boolean (what a record's field is compared with, as JSON). */
function IsErasableValue(): PropertyDecorator {
  return ValidateBy({
    name: 'isErasableValue',
    validator: {
      validate: (value: unknown) =>
        (typeof value === 'string' && value.length > 0 && value.length <= 10_000) ||
        (typeof value === 'number' && Number.isFinite(value)) ||
        typeof value === 'boolean',
      defaultMessage: () => 'value must be a non-empty string, a number or a boolean',
    },
  });
}

export class EraseFieldValueDto {
  @ApiProperty({
    description: 'The field that identifies the data subject (a top-level name or a dotted path `a.b`)',
    example: 'email',
  })
  @IsFieldPath()
  field: string;

  @ApiProperty({
    description: "The subject's value of that field; records match when their value is equal as JSON",
    oneOf: [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }],
    example: 'john.roe@example.com',
  })
  @IsErasableValue()
  value: string | number | boolean;
}

export class ErasureMatchedDto {
  @ApiProperty({ example: 2, description: 'Records matched when the erasure was accepted' }) records: number;
  @ApiProperty({ example: 1, description: 'Workflow runs matched when the erasure was accepted' })
  runs: number;
}

export class ErasureDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ enum: ['user', 'field'] }) kind: ErasureKind;
  @ApiProperty({
    type: 'object',
    description: '`{userId}` for a user; `{configId, field}` for a field value (the value is never kept)',
    properties: {
      userId: { type: 'string', format: 'uuid' },
      configId: { type: 'string', format: 'uuid' },
      field: { type: 'string' },
    },
    additionalProperties: { type: 'string' },
    example: { userId: '7d2e1f0a-…' },
  })
  subject: Record<string, string>;
  @ApiProperty({ enum: ['running', 'done'] }) status: 'running' | 'done';
  @ApiProperty({ type: ErasureMatchedDto }) matched: ErasureMatchedDto;
  @ApiProperty({
    type: [String],
    enum: ERASURE_STEPS,
    description: 'The steps done so far, in order (a restarted erasure goes on after the last one)',
  })
  stepsDone: string[];
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'integer' },
    description:
      'How many of each kind went: records, pendingEvents, historyEntries, webhookDeliveries, runs, runEffects, ' +
      'outboxMail, idempotentAnswers, importRequests, accounts',
    example: { records: 2, historyEntries: 5, runs: 1 },
  })
  counts: Record<string, number>;
  @ApiProperty({ format: 'uuid', description: 'The admin who asked for it' }) requestedBy: string;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) finishedAt: string | null;
}

export class ErasurePageDto {
  @ApiProperty({ type: [ErasureDto], description: 'Newest first' }) data: ErasureDto[];
  @ApiProperty({ example: 1 }) total: number;
  @ApiProperty({ example: 1 }) page: number;
  @ApiProperty({ example: 1 }) pages: number;
}
