import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsDefined,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  IsUrl,
  Length,
  Max,
  MaxLength,
  Min,
  Validate,
  ValidateNested,
} from 'class-validator';
import { RecipientsConstraint } from '../notify/notify-step.config';

export class ApproversConfig {
  /** Roles whose users may decide. */
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  @IsString({ each: true })
  @Length(1, 100, { each: true })
  roles?: string[];

  /** User ids that may decide (templates allowed: `{{input.managerId}}`). */
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  @IsString({ each: true })
  @Length(1, 200, { each: true })
  users?: string[];
}

export class ApprovalNotifyConfig {
  @Validate(RecipientsConstraint)
  to: string | string[];

  @IsString() @IsNotEmpty() @MaxLength(998) subject: string;

  /**
   * Plain text; `{{approval.link}}`, `{{approval.runId}}` and `{{approval.step}}` are filled in (the
   * link is appended when the text does not use it).
   */
  @IsOptional() @IsString() @MaxLength(100_000) text?: string;

  /** Put before the decision route's path in the link (`https://forms.example.com`). */
  @IsOptional() @IsUrl({ require_tld: false, protocols: ['http', 'https'] }) baseUrl?: string;
}

/** The `config` of an `approval` step. */
export class ApprovalStepConfig {
  @IsDefined()
  @IsObject()
  @ValidateNested()
  @Type(() => ApproversConfig)
  approvers: ApproversConfig;

  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => ApprovalNotifyConfig)
  notify?: ApprovalNotifyConfig;

  /** How long the run waits for a decision (at most 90 days); none: until someone decides or cancels. */
  @IsOptional() @IsInt() @Min(1) @Max(90 * 86_400_000) timeoutMs?: number;

  /** The outcome when nobody decided in time (default `reject`). */
  @IsOptional() @IsIn(['approve', 'reject']) onTimeout?: 'approve' | 'reject';

  /**
   * Whether the user who started the run may decide on it through a role (or as an admin); default
   * false: the starter decides only when named in `approvers.users`.
   */
  @IsOptional() @IsBoolean() allowSelfApproval?: boolean;
}
