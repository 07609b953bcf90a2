import type { Readable } from 'node:stream';
import { Injectable } from '@nestjs/common';
import { RecordAttachments } from '../../data/record-attachments.service';
import { RecordsService } from '../../data/records.service';
import type { StepContext } from './step-handler';

/** A file of a record, as a step sees it (the record's JSON shows the same metadata). */
export interface StepFile {
  configId: string;
  recordId: string;
  attachmentId: string;
  field: string;
  filename: string;
  mediaType: string;
  size: number;
  sha256: string;
}

/**
 * A record's files for a step (README "Attachments"): listed and opened as the run's caller, with
 * the record's own read rules (form permission, site, owner unless viewAllResults, trash), so a
 * step reaches exactly the files its caller could download. Inject it (StepFilesModule) in a step.
 */
@Injectable()
export class StepFiles {
  constructor(
    private readonly records: RecordsService,
    private readonly files: RecordAttachments,
  ) {}

  /** The record's files (of `fields` only, when given), in upload order; RECORD_NOT_FOUND when unreadable. */
  async ofRecord(
    context: Pick<StepContext, 'ctx'>,
    configId: string,
    recordId: string,
    fields?: readonly string[],
  ): Promise<StepFile[]> {
    const record = await this.records.get(context.ctx, configId, recordId);
    return (record.attachments ?? [])
      .filter((file) => !fields || fields.includes(file.field))
      .map((file) => ({
        configId,
        recordId,
        attachmentId: file.attachmentId,
        field: file.field,
        filename: file.filename,
        mediaType: file.mediaType,
        size: file.size,
        sha256: file.sha256,
      }));
  }

  /** One file's bytes, streamed from the blob store (never whole in memory); the access is checked again. */
  async open(
    context: Pick<StepContext, 'ctx'>,
    file: Pick<StepFile, 'configId' | 'recordId' | 'attachmentId'>,
  ): Promise<Readable> {
    const download = await this.files.open(
      context.ctx,
      file.configId,
      file.recordId,
      file.attachmentId,
      undefined,
    );
    return download.body;
  }
}
