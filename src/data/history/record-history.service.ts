import { Injectable } from '@nestjs/common';
import { requireUser, type ChangeOrigin, type RequestContext } from '../../common/context/request-context';
import { AppError } from '../../common/errors/app-error';
import { isUuid } from '../../common/validation/is-uuid';
import { FormAccessService, type FormAccess } from '../../permissions/form-access.service';
import { parsePageQuery } from '../list-query.parser';
import type { RecordRow } from '../record.mapper';
import { hiddenDraft, mayOpenTrash, recordScope, trashScope } from '../record-selection';
import { RecordsRepository } from '../records.repository';
import type { AttachmentChangeDto, RecordHistoryEntryDto, RecordHistoryPageDto } from './record-history.dto';
import { AttachmentsService } from '../../attachments/attachments.service';
import { attachmentFieldsOf } from '../../validation/attachment-fields';
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
    private readonly attachments: AttachmentsService,
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
    const entries = rows.map(toHistoryEntry);
    return {
      data: await this.withAttachmentChanges(access.config.schema, entries),
      total,
      page: paging.page,
      pages: Math.ceil(total / paging.limit),
    };
  }

  /** Each entry changing an attachment field gets the files it added and removed (ids compared). */
  private async withAttachmentChanges(
    schema: Record<string, unknown> | null,
    entries: RecordHistoryEntryDto[],
  ): Promise<RecordHistoryEntryDto[]> {
    const fields = attachmentFieldsOf(schema).map((field) => field.name);
    const diffs = entries.map((entry) => attachmentDiff(entry.changes, fields));
    const ids = diffs.flatMap((diff) =>
      diff ? [...diff.added, ...diff.removed].map((file) => file.attachmentId) : [],
    );
    if (ids.length === 0) return entries;
    const known = await this.attachments.describe(ids);
    const shown = (file: AttachmentChangeDto) => ({ ...file, ...known.get(file.attachmentId) });
    return entries.map((entry, i) => {
      const diff = diffs[i];
      return diff
        ? { ...entry, attachments: { added: diff.added.map(shown), removed: diff.removed.map(shown) } }
        : entry;
    });
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

/** The ids one or several attachment values name. */
function idsOf(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

/** The files a change of attachment fields added and removed; null when it changed none. */
function attachmentDiff(
  changes: RecordHistoryEntryDto['changes'],
  fields: string[],
): { added: AttachmentChangeDto[]; removed: AttachmentChangeDto[] } | null {
  const changed = fields.filter((field) => field in changes);
  if (changed.length === 0) return null;
  const added: AttachmentChangeDto[] = [];
  const removed: AttachmentChangeDto[] = [];
  for (const field of changed) {
    const before = idsOf(changes[field].before);
    const after = idsOf(changes[field].after);
    for (const id of after) if (!before.includes(id)) added.push({ attachmentId: id, field });
    for (const id of before) if (!after.includes(id)) removed.push({ attachmentId: id, field });
  }
  return { added, removed };
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
