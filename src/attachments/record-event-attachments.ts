import { Injectable } from '@nestjs/common';
import { isUuid } from '../common/validation/is-uuid';
import type { DomainEvent } from '../events/domain-event';
import { toRecordAttachment } from './attachment.mapper';
import { AttachmentsRepository } from './attachments.repository';

/** The record of a record event (`data.record`, the record as the API returns it), when it has an id. */
function recordOf(event: DomainEvent): (Record<string, unknown> & { _id: string }) | null {
  const record = event.data.record;
  if (record === null || typeof record !== 'object' || Array.isArray(record)) return null;
  return typeof (record as { _id?: unknown })._id === 'string'
    ? (record as Record<string, unknown> & { _id: string })
    : null;
}

/**
 * Record events as webhooks send them and workflow triggers start runs with them: the record of a
 * record event gets `attachments`, its files' metadata as the record's JSON shows it (id, field,
 * filename, mediaType, size, sha256, url), read once per batch when the event is taken (its
 * records' files as they are then). A record without files gets no `attachments`.
 */
@Injectable()
export class RecordEventAttachments {
  constructor(private readonly repository: AttachmentsRepository) {}

  async withAttachments(events: DomainEvent[]): Promise<DomainEvent[]> {
    const ids = [...new Set(events.flatMap((event) => recordOf(event)?._id ?? []))].filter(isUuid);
    if (ids.length === 0) return events;
    const byRecord = new Map<string, ReturnType<typeof toRecordAttachment>[]>();
    for (const row of await this.repository.listByRecords(ids)) {
      if (row.recordId === null) continue;
      const shown = toRecordAttachment({ ...row, recordId: row.recordId });
      byRecord.set(row.recordId, [...(byRecord.get(row.recordId) ?? []), shown]);
    }
    return events.map((event) => {
      const record = recordOf(event);
      const attachments = record && byRecord.get(record._id);
      return attachments ? { ...event, data: { ...event.data, record: { ...record, attachments } } } : event;
    });
  }
}
