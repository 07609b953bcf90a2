import { Inject, Injectable } from '@nestjs/common';
import { AttachmentUploadsService, multipartInvalid } from '../attachments/attachment-uploads.service';
import type { RequestContext } from '../common/context/request-context';
import { jsonPartValue, type MultipartPart } from '../common/http/multipart-body';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { FormAccessService } from '../permissions/form-access.service';
import { attachmentFieldsOf, type AttachmentField } from '../validation/attachment-fields';
import type { SavedRecordDto } from './dto/record.dto';
import { requireObject } from './record-rules';
import { RecordDraftsService } from './record-drafts.service';
import { RecordsService } from './records.service';

/** The text part holding a record's field values as JSON. */
export const RECORD_PART = 'record';

/**
 * A record sent with its files in one multipart request (README "Attachments", "A record with its
 * files"): a `record` part (the field values, JSON) and file parts named by their attachment field
 * (repeated for an array field), in any order. Each file is uploaded as it arrives (streamed, with
 * the upload's checks), then the record is created with its attachment fields holding the new ids
 * (an array field: the ids the record part lists, then the files'); a record refused for any reason
 * removes the files uploaded by the request, so nothing is stored. With `draft`, the record is saved
 * as a draft (`?status=draft`) instead of created.
 */
@Injectable()
export class RecordWithFiles {
  constructor(
    private readonly access: FormAccessService,
    private readonly uploads: AttachmentUploadsService,
    private readonly records: RecordsService,
    private readonly drafts: RecordDraftsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async create(
    ctx: RequestContext,
    configId: string,
    parts: AsyncIterable<MultipartPart>,
    options: { draft: boolean } = { draft: false },
  ): Promise<SavedRecordDto> {
    // Refused before a byte of a file is read.
    const { config } = await this.access.require(ctx, configId, 'createResults');
    const fields = attachmentFieldsOf(config.schema);
    const uploaded: { field: string; id: string }[] = [];
    try {
      let record: Record<string, unknown> | undefined;
      for await (const part of parts) {
        if (part.kind === 'text') {
          if (part.name !== RECORD_PART)
            throw multipartInvalid(`unknown text part "${part.name.slice(0, 100)}"`);
          record = requireObject(jsonPartValue(part.value, this.config.bodyMaxDepth));
          continue;
        }
        // A file's part name is its field, nothing else: no fallback to a form's only field.
        const file = await this.uploads.upload(ctx, configId, {
          field: part.name,
          filename: part.filename,
          declaredLength: null,
          body: part.body,
        });
        uploaded.push({ field: file.field, id: file.attachmentId });
      }
      if (!record) throw multipartInvalid(`the body has no "${RECORD_PART}" part`);
      const data = withFiles(record, fields, uploaded);
      return await (options.draft
        ? this.drafts.save(ctx, configId, data)
        : this.records.create(ctx, configId, data));
    } catch (error) {
      await this.uploads.discard(uploaded.map((file) => file.id));
      throw error;
    }
  }
}

/** The record's values with each attachment field that received files holding their ids. */
function withFiles(
  record: Record<string, unknown>,
  fields: AttachmentField[],
  uploaded: { field: string; id: string }[],
): Record<string, unknown> {
  const data = { ...record };
  for (const field of fields) {
    const ids = uploaded.filter((file) => file.field === field.name).map((file) => file.id);
    if (ids.length === 0) continue;
    const listed = Array.isArray(record[field.name]) ? (record[field.name] as unknown[]) : [];
    // Two files for a one-file field stay an array: the record's validation names the field.
    data[field.name] = field.multiple ? [...listed, ...ids] : ids.length === 1 ? ids[0] : ids;
  }
  return data;
}
