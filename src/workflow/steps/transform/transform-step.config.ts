import {
  IsObject,
  IsOptional,
  IsString,
  Length,
  Validate,
  ValidatorConstraint,
  type ValidatorConstraintInterface,
} from 'class-validator';
import { isAllowedSegment } from '../../../common/validation/field-path';

const MAX_FIELDS = 200;

/** Every target is one allowed field name and every source a dotted path of allowed segments. */
@ValidatorConstraint({ name: 'mapping' })
class MappingConstraint implements ValidatorConstraintInterface {
  validate(mapping: unknown): boolean {
    if (!mapping || typeof mapping !== 'object' || Array.isArray(mapping)) return false;
    const entries = Object.entries(mapping);
    return (
      entries.length <= MAX_FIELDS &&
      entries.every(
        ([target, source]) =>
          isAllowedSegment(target) && typeof source === 'string' && source.split('.').every(isAllowedSegment),
      )
    );
  }

  defaultMessage(): string {
    return `mapping must map at most ${MAX_FIELDS} field names (letters, digits, _ and -) to dotted source paths; prototype names are not allowed`;
  }
}

export class TransformStepConfig {
  /** Target field name -> source field (a dotted path inside the source object). */
  @IsObject() @Validate(MappingConstraint) mapping: Record<string, string>;

  /** The context path of the source object (default `input`). */
  @IsOptional() @IsString() @Length(1, 200) source?: string;
}
