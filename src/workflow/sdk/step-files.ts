import type { Readable } from 'node:stream';
import { Injectable } from '@nestjs/common';
import { RecordAttachments } from '../../data/record-attachments.service';
import { RecordsService } from '../../data/records.service';
import { StepError } from './step-error';
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

/**
 * The files of the run's record (savedData: the record that triggered the run, or the one a `save`
 * step stored), of `fields` only when given, read as the run's caller. NO_RECORD_TO_ATTACH when the
 * run has no record, or where no StepFiles is provided; `option` names the step option asking.
 */
export async function runRecordFiles(
  files: StepFiles | undefined,
  context: Pick<StepContext, 'ctx' | 'scope'>,
  option: string,
  fields?: readonly string[],
): Promise<StepFile[]> {
  const record = context.scope.savedData;
  if (!files || typeof record?._id !== 'string' || typeof record.configId !== 'string')
    throw new StepError(`${option} needs the run’s record (savedData): a triggered run’s or a save step’s`, {
      code: 'NO_RECORD_TO_ATTACH',
    });
  return files.ofRecord(context, record.configId, record._id, fields);
}
