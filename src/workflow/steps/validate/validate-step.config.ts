import { IsIn, IsOptional, IsString, IsUUID, Length, ValidateIf } from 'class-validator';

const TEMPLATE = /\{\{/;

export class ValidateStepConfig {
  /** The configuration whose rules apply (default: the execute body's `configId`); may be a template. */
  @IsOptional()
  @ValidateIf((_, value: unknown) => typeof value !== 'string' || !TEMPLATE.test(value))
  @IsUUID()
  configId?: string;

  @IsOptional() @IsIn(['sequential']) mode?: 'sequential';

  @IsOptional() @IsIn(['en', 'hu']) locale?: 'en' | 'hu';

  /** The context path of the data to validate (default `input`). */
  @IsOptional() @IsString() @Length(1, 200) source?: string;
}
