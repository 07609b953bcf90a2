import { IsIn, IsOptional, IsString, IsUUID, Length, ValidateIf } from 'class-validator';

const TEMPLATE = /\{\{/;

export class SaveStepConfig {
  /** The configuration to save into (default: the execute body's `configId`); may be a template. */
  @IsOptional()
  @ValidateIf((_, value: unknown) => typeof value !== 'string' || !TEMPLATE.test(value))
  @IsUUID()
  configId?: string;

  @IsOptional() @IsIn(['en', 'hu']) locale?: 'en' | 'hu';

  /** The context path of the data to save (default `input`; `results.<transform step>` after a transform). */
  @IsOptional() @IsString() @Length(1, 200) source?: string;
}
