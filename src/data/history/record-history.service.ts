import { Injectable } from '@nestjs/common';
import { requireUser, type ChangeOrigin, type RequestContext } from '../../common/context/request-context';
import { AppError } from '../../common/errors/app-error';
import { isUuid } from '../../common/validation/is-uuid';
import { FormAccessService, type FormAccess } from '../../permissions/form-access.service';
import { parsePageQuery } from '../list-query.parser';
import type { RecordRow } from '../record.mapper';
import { hiddenDraft, mayOpenTrash, recordScope, trashScope } from '../record-selection';
import { RecordsRepository } from '../records.repository';
import type { RecordHistoryEntryDto, RecordHistoryPageDto } from './record-history.dto';
import { RecordHistoryRepository, type HistoryAction, type HistoryRow } from './record-history.repository';

/** Entries one page of a history holds at most (each may carry a whole record's fields). */
export const HISTORY_MAX_LIMIT = 100;

/**
 * A record's history, to whoever may read the record: an active record's to its readers (the
 * owner, or everyone with viewAllResults, and admins); a record in the trash to whoever may open
 * the trash (its owner when the form allows deletion, admins); a purged record's to admins only.
 * Anyone else gets the 404 of a record they cannot see.
 */
@Injectable()
export class RecordHistoryService {
  constructor(
    private readonly access: FormAccessService,
    private readonly records: RecordsRepository,
    private readonly history: RecordHistoryRepository,
  ) {}

  async list(
    ctx: RequestContext,
    configId: string,
    dataId: string,
    query: Record<string, unknown>,
  ): Promise<RecordHistoryPageDto> {
    const access = await this.access.require(ctx, configId, 'viewOwnResults');
    const paging = parsePageQuery(query, HISTORY_MAX_LIMIT);
    const scope = { ...recordScope(ctx, access, { owners: 'any' }), state: 'any' as const };
    const record = await this.records.findInScope(dataId, scope);
    const admin = requireUser(ctx).role === 'admin';
    if (record ? !this.mayRead(ctx, access, record) : !(admin && isUuid(dataId)))
      throw new AppError('RECORD_NOT_FOUND');
    const { rows, total } = await this.history.page(record?.id ?? dataId, access.config.id, paging);
    // An admin asking for an id that never had a record of this form.
    if (!record && total === 0) throw new AppError('RECORD_NOT_FOUND');
    return {
      data: rows.map(toHistoryEntry),
      total,
      page: paging.page,
      pages: Math.ceil(total / paging.limit),
    };
  }

  private mayRead(ctx: RequestContext, access: FormAccess, record: RecordRow): boolean {
    // A draft's history is its owner's and the admins', as the draft is.
    if (hiddenDraft(ctx, record)) return false;
    const owner = record.isActive
      ? recordScope(ctx, access, { owners: 'ownUnlessViewAll' }).ownerId
      : mayOpenTrash(ctx, access)
        ? trashScope(ctx, access).ownerId
        : undefined;
    return owner === null || (owner !== undefined && owner === record.userId);
  }
}

function toHistoryEntry(row: HistoryRow): RecordHistoryEntryDto {
  return {
    id: row.id,
    recordId: row.recordId,
    configId: row.configId,
    action: row.action as HistoryAction,
    userId: row.userId,
    origin: row.origin as ChangeOrigin | null,
    changes: row.changes,
    at: row.at.toISOString(),
    configVersion: row.configVersion ?? null,
    erasedAt: row.erasedAt?.toISOString() ?? null,
  };
}
