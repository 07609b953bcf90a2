import { IsObject, IsOptional, IsString, Length } from 'class-validator';

export class TransformStepConfig {
  /** Target field name -> source field (a dotted path inside the source object). */
  @IsObject() mapping: Record<string, string>;

  /** The context path of the source object (default `input`). */
  @IsOptional() @IsString() @Length(1, 200) source?: string;
}
