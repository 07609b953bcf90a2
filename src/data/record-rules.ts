import { type AuthUser, type RequestContext } from '../common/context/request-context';
import type { ConfigRow } from '../form-configs/form-configs.repository';
import { AppError } from '../common/errors/app-error';
import type { ValidationOutcome } from '../validation/form-definition';
import { type RecordRow } from './record.mapper';
import { hiddenDraft, type RecordScope } from './record-selection';
import { type ChangeAuthor } from './records.repository';

/*
 * The record service's small rules: who authored a change, who may read or change a record, what a
 * refused validation and a body that is not an object answer.
 */

export type SubmittedData = Record<string, unknown>;

/** Who makes a change and through which route or run, for the record's history. */
export function authorOf(ctx: RequestContext): ChangeAuthor {
  return { userId: ctx.user?.userId ?? null, origin: ctx.origin ?? null };
}

/** Someone else's record is a 404 to a user who may see only their own: its existence is not revealed. */
export function assertReadable(scope: RecordScope, record: Pick<RecordRow, 'userId'>): void {
  if (scope.ownerId !== null && record.userId !== scope.ownerId) throw new AppError('RECORD_NOT_FOUND');
}

/**
 * A record the caller may see: as assertReadable, and someone else's draft is a 404 even to a holder
 * of viewAllResults (only its owner and admins see a draft).
 */
export function assertVisible(
  ctx: RequestContext,
  scope: RecordScope,
  record: Pick<RecordRow, 'userId' | 'isDraft'>,
) {
  assertReadable(scope, record);
  if (hiddenDraft(ctx, record)) throw new AppError('RECORD_NOT_FOUND');
}

/** Only the owner changes a record, and only when the form allows it; admins always may. */
export function assertOwnerMayChange(
  user: AuthUser,
  record: Pick<RecordRow, 'userId'>,
  rule: { allowed: boolean; refusal: 'data.editNotAllowed' | 'data.deleteNotAllowed' },
): void {
  if (user.role === 'admin') return;
  if (record.userId !== user.userId) throw new AppError('FORBIDDEN', { messageKey: 'data.notAuthorized' });
  if (!rule.allowed) throw new AppError('FORBIDDEN', { messageKey: rule.refusal });
}

export function validationFailed(result: ValidationOutcome): AppError {
  return new AppError('DATA_VALIDATION_FAILED', {
    validationErrors: result.validationErrors,
    fieldResults: result.fieldResults,
  });
}

export function requireObject(body: unknown): SubmittedData {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new AppError('VALIDATION_FAILED', {
      validationErrors: [
        { field: '$body', rule: 'isObject', message: 'the body must be a JSON object of field values' },
      ],
    });
  }
  return body as SubmittedData;
}

/** Computed values as stored: only when the form keeps them and there are some (else SQL NULL). */
export function storedComputedResults(config: ConfigRow, computed: Record<string, unknown>) {
  return config.preferences.storeComputedResults && Object.keys(computed).length > 0 ? computed : null;
}

/**
 * 400 DATA_SAVE_LIMIT_REACHED of a create or a draft's submit. With a single allowed submission that
 * may be edited, the client loads and edits the earlier one (`existingDataId`).
 */
export function saveLimitReached(config: ConfigRow, existingId: string | null): AppError {
  const limit = config.preferences.saveLimit ?? null;
  return new AppError('DATA_SAVE_LIMIT_REACHED', {
    messageKey: 'data.saveLimitReached',
    params: { limit },
    details:
      limit === 1 && config.preferences.allowEdit && existingId
        ? { limit, existingDataId: existingId }
        : { limit },
  });
}
