import { Inject, Injectable } from '@nestjs/common';
import { HourlyPurge } from '../common/lifecycle/hourly-purge';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { AttachmentsRepository } from './attachments.repository';
import { BLOB_CONTENT, type BlobContent } from './blob-content';

/**
 * Hourly (and at start) on every instance: removes uploads no record has referred to for
 * ATTACHMENT_UNLINKED_HOURS, uploads that never finished, and blobs nothing refers to any more
 * (the last record referring to them was purged from the trash or erased), and stored bytes whose blob
 * row is gone (a crash between the two deletes). Safe on several
 * instances at once: each takes different rows (SKIP LOCKED), a second run finds nothing to do.
 */
@Injectable()
export class AttachmentCleanup extends HourlyPurge {
  constructor(
    private readonly repository: AttachmentsRepository,
    @Inject(BLOB_CONTENT) private readonly content: BlobContent,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    super('unreferenced attachments and blobs');
  }

  /** Cleans what has been unreferenced since before `cutoff` (default: ATTACHMENT_UNLINKED_HOURS ago). */
  purge(cutoff = new Date(Date.now() - this.config.attachmentUnlinkedHours * 3_600_000)): Promise<number> {
    return this.counted(async () => {
      const removed = await this.repository.deleteUnreferenced(cutoff);
      await this.content.remove(removed.blobIds);
      const orphans = await this.content.removeOrphans((ids) => this.repository.existingBlobIds(ids));
      return removed.attachments + removed.blobs + orphans;
    });
  }
}
