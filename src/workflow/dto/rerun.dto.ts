import { ApiPropertyOptional, ApiProperty } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, Length } from 'class-validator';

export const RERUN_DEFINITIONS = ['original', 'current'] as const;

export class RerunDto {
  @ApiProperty({
    example: 'start',
    description:
      '`start`, `failed` (the first step that failed), or a step name: the steps before it are taken over ' +
      'from the run (results, saved record), not run again',
  })
  @IsString()
  @Length(1, 200)
  from: string;

  @ApiPropertyOptional({
    enum: RERUN_DEFINITIONS,
    default: 'original',
    description: 'The definition the run ran with (`original`) or the workflow’s current one',
  })
  @IsOptional()
  @IsIn(RERUN_DEFINITIONS)
  definition?: (typeof RERUN_DEFINITIONS)[number];
}
