import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsDefined,
  IsIn,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  Length,
  MaxLength,
  Validate,
  ValidateIf,
  ValidateNested,
  ValidatorConstraint,
  type ValidationArguments,
  type ValidatorConstraintInterface,
} from 'class-validator';
import { mailTemplateExists } from '../../../mail/mail-templates';
import { parseRecipients } from '../../../mail/recipients';

export const NOTIFY_FORMATS = ['html-table', 'plain', 'template'] as const;
export type NotifyFormat = (typeof NOTIFY_FORMATS)[number];

const MAX_TO_LENGTH = 4000;

/**
 * A literal `to` must hold valid addresses already; one with `{{...}}` is checked once rendered. A
 * single-token template (`{{input.emails}}`) keeps an array's type, so a rendered `to` may be an
 * array of addresses.
 */
@ValidatorConstraint({ name: 'recipients' })
export class RecipientsConstraint implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    if (Array.isArray(value)) return parseRecipients(value).ok;
    return (
      typeof value === 'string' &&
      value.trim() !== '' &&
      value.length <= MAX_TO_LENGTH &&
      (value.includes('{{') || parseRecipients(value).ok)
    );
  }
  defaultMessage(args: ValidationArguments): string {
    return `${args.property} must be e-mail addresses separated by commas (at most ${MAX_TO_LENGTH} characters), an array of them, or a template such as {{input.email}}`;
  }
}

/** `attachFiles`: true, or the names of attachment fields (at least one). */
@ValidatorConstraint({ name: 'attachFiles' })
class AttachFilesConstraint implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    if (typeof value === 'boolean') return true;
    return (
      Array.isArray(value) &&
      value.length > 0 &&
      value.length <= 100 &&
      value.every((name) => typeof name === 'string' && name.length > 0 && name.length <= 200)
    );
  }
  defaultMessage(args: ValidationArguments): string {
    return `${args.property} must be true, false or a list of attachment field names`;
  }
}

/** `templateName` names an existing `i18n/templates/<name>.html`, and is not given together with `template`. */
@ValidatorConstraint({ name: 'mailTemplateName' })
class MailTemplateNameConstraint implements ValidatorConstraintInterface {
  validate(value: unknown, args: ValidationArguments): boolean {
    if ((args.object as NotifyEmailConfig).template !== undefined) return false;
    return typeof value === 'string' && mailTemplateExists(value);
  }
  defaultMessage(args: ValidationArguments): string {
    return (args.object as NotifyEmailConfig).template !== undefined
      ? `give either template or ${args.property}, not both`
      : `${args.property} must name a template file i18n/templates/<name>.html (letters, digits, - and _)`;
  }
}

export class NotifyEmailConfig {
  /**
   * One address or several separated by commas; templates allowed (`{{input.email}}`); rendered
   * from a single token, an array of addresses.
   */
  @Validate(RecipientsConstraint)
  to: string | string[];

  /** Templates allowed; control characters become spaces and the rendered text is cut to 998 characters. */
  @IsString()
  @IsNotEmpty()
  @MaxLength(998)
  subject: string;

  @IsOptional()
  @IsIn(NOTIFY_FORMATS)
  format?: NotifyFormat = 'html-table';

  /**
   * `format: template` only: the step's own HTML template, left unrendered by the runner
   * (`rawFields`) and rendered by the step with every inserted value HTML-escaped.
   */
  @ValidateIf(
    (o: NotifyEmailConfig) =>
      o.template !== undefined || (o.format === 'template' && o.templateName === undefined),
  )
  @IsString()
  @IsNotEmpty()
  @MaxLength(100_000)
  template?: string;

  /** `format: template` only, instead of `template`: the file `i18n/templates/<templateName>.html`. */
  @ValidateIf((o: NotifyEmailConfig) => o.templateName !== undefined)
  @IsString()
  @Validate(MailTemplateNameConstraint)
  templateName?: string;

  /** `html-table` and `plain`: the fields to list, in this order (default: every submitted field). */
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(500)
  @IsString({ each: true })
  @Length(1, 200, { each: true })
  fields?: string[];

  /**
   * Attach the files of the run's record (`savedData`: the record that triggered the run, or the one
   * a `save` step stored): true for all of them, or those of the attachment fields named; within
   * NOTIFY_ATTACHMENTS_MAX_BYTES together.
   */
  @IsOptional()
  @Validate(AttachFilesConstraint)
  attachFiles?: boolean | string[];
}

/** The `config` of a `notify` step. */
export class NotifyStepConfig {
  @IsDefined()
  @IsObject()
  @ValidateNested()
  @Type(() => NotifyEmailConfig)
  email: NotifyEmailConfig;
}
