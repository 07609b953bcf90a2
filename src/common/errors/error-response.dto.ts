import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { FREE_OBJECT } from '../http/openapi-schemas';
import type { ErrorBody } from './error-body';
import type { FieldError } from './app-error';

export class FieldErrorDto implements FieldError {
  @ApiProperty({
    example: 'address.city',
    description: 'The field, dotted; array items as `steps[2].config`',
  })
  field: string;
  @ApiProperty({ example: 'required' }) rule: string;
  @ApiProperty({ example: 'address.city is required' }) message: string;
}

/** The one error body of every 4xx and 5xx answer; the document references it from each of them. */
export class ErrorResponseDto implements ErrorBody {
  @ApiProperty({ enum: [false] }) success: false;
  @ApiProperty({ description: 'Localized message', example: 'Validation failed' }) error: string;
  @ApiProperty({ description: 'Stable error code', example: 'VALIDATION_FAILED' }) code: string;
  @ApiProperty({ example: 422 }) statusCode: number;
  @ApiPropertyOptional({ type: [FieldErrorDto] }) validationErrors?: FieldErrorDto[];
  @ApiPropertyOptional({
    ...FREE_OBJECT,
    description: 'Record validation: `{field: {valid, errors[]}}` for every schema property and rule field',
  })
  fieldResults?: Record<string, unknown>;
  @ApiPropertyOptional({ ...FREE_OBJECT, description: 'Facts of the error, such as `limit` of a save limit' })
  details?: Record<string, unknown>;
  @ApiPropertyOptional({ description: 'Only with NODE_ENV=development' }) stack?: string;
}
