import { Injectable } from '@nestjs/common';
import { AttachmentsService, type AttachmentDownload } from '../attachments/attachments.service';
import type { RequestContext } from '../common/context/request-context';
import { RecordsService } from './records.service';

/** A record's files, to whoever may read the record. */
@Injectable()
export class RecordAttachments {
  constructor(
    private readonly records: RecordsService,
    private readonly attachments: AttachmentsService,
  ) {}

  /**
   * Streams one file of a record after the record's own read rules (form permission, site, owner
   * unless viewAllResults, trash): whoever gets a 404 for the record gets one for its files.
   */
  async open(
    ctx: RequestContext,
    configId: string,
    dataId: string,
    attachmentId: string,
    range: string | undefined,
  ): Promise<AttachmentDownload> {
    await this.records.get(ctx, configId, dataId);
    return this.attachments.open(dataId, attachmentId, range);
  }
}
