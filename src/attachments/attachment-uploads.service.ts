import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { requireUser, type RequestContext } from '../common/context/request-context';
import { siteOfNewRecord } from '../common/context/site-scope';
import { AppError } from '../common/errors/app-error';
import type { MultipartPart } from '../common/http/multipart-body';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { FormAccessService } from '../permissions/form-access.service';
import { attachmentFieldsOf, mediaTypeAllowed, type AttachmentField } from '../validation/attachment-fields';
import { toUploadedAttachment } from './attachment.mapper';
import { AttachmentsRepository } from './attachments.repository';
import { BLOB_CONTENT, CHUNK_BYTES, type BlobContent } from './blob-content';
import type { UploadedAttachmentDto } from './dto/attachment.dto';
import { SNIFF_BYTES, sniffMediaType } from './media-type-sniffer';

/** One file as the route received it: the body is read only by the upload, as a stream. */
export interface UploadInput {
  field: string | undefined;
  /** A multipart file part's name: the field when `field` is not given and it names one. */
  partName?: string;
  filename: string | undefined;
  /** The Content-Length the client declared, when it declared one. */
  declaredLength: number | null;
  body: AsyncIterable<Buffer>;
}

/** Control characters and lone surrogates: they must not reach a header or a log. */
const UNSHOWABLE =
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  /[\u0000-\u001f\u007f]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * A client's file name as something only ever shown: its last path segment, without control
 * characters, at most 255 characters; `file` when nothing is left.
 */
export function safeFilename(name: string | undefined): string {
  const base = (name ?? '').split(/[\\/]/).pop() ?? '';
  const clean = base.replace(UNSHOWABLE, '').trim();
  const short = [...clean].slice(0, 255).join('');
  return short === '' || short === '.' || short === '..' ? 'file' : short;
}

/**
 * Uploads: the bytes are hashed and written to the blob store chunk by chunk as they arrive (never
 * the whole file in memory); the media type is sniffed from the first chunk before anything is
 * written, and a refusal (type, size, emptiness, quota) removes whatever was written.
 */
@Injectable()
export class AttachmentUploadsService {
  constructor(
    private readonly access: FormAccessService,
    private readonly repository: AttachmentsRepository,
    @Inject(BLOB_CONTENT) private readonly content: BlobContent,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async upload(ctx: RequestContext, configId: string, input: UploadInput): Promise<UploadedAttachmentDto> {
    const { config } = await this.access.require(ctx, configId, 'createResults');
    const user = requireUser(ctx);
    const fields = attachmentFieldsOf(config.schema);
    const named =
      input.field ?? fields.find((candidate) => candidate.name === input.partName)?.name ?? undefined;
    // A form with a single attachment field needs no `field`.
    const field =
      named === undefined && fields.length === 1
        ? fields[0]
        : fields.find((candidate) => candidate.name === named);
    if (!field)
      throw new AppError('ATTACHMENT_FIELD_UNKNOWN', {
        params: { field: input.field ?? '' },
        details: { attachmentFields: fields.map((candidate) => candidate.name) },
      });
    const maxBytes = Math.min(field.maxSize ?? Infinity, this.config.attachmentMaxBytes);
    if (input.declaredLength !== null && input.declaredLength > maxBytes) throw tooLarge(maxBytes);
    if (input.declaredLength === 0) throw new AppError('ATTACHMENT_EMPTY');
    const perMinute = this.config.attachmentUploadsPerMinute;
    if ((await this.repository.recentUploads(user.userId)) >= perMinute) throw uploadLimit(perMinute);

    const blobId = await this.repository.createPendingBlob(CHUNK_BYTES);
    let kept = false;
    try {
      const written = await this.write(blobId, input.body, field, maxBytes);
      const outcome = await this.repository.finishUpload(
        blobId,
        { sha256: written.sha256, size: written.size },
        {
          configId: config.id,
          field: field.name,
          siteId: siteOfNewRecord(ctx, config.siteId),
          uploadedBy: user.userId,
          filename: safeFilename(input.filename),
          mediaType: written.mediaType,
          size: written.size,
          sha256: written.sha256,
        },
        perMinute,
      );
      if ('limited' in outcome) throw uploadLimit(perMinute);
      kept = !outcome.deduplicated;
      return toUploadedAttachment(outcome.attachment);
    } finally {
      // A refused upload, or a duplicate of a stored blob: its pending blob goes, row then bytes.
      // Only a finished blob stays: it belongs to the attachment that refers to it.
      if (!kept) {
        await this.repository.deletePendingBlob(blobId);
        await this.content.remove([blobId]);
      }
    }
  }

  /**
   * A multipart upload: exactly one part, a file (its part name may name the field, `field` wins).
   * The route's limits make any further part an error, which removes the upload made.
   */
  async uploadPart(
    ctx: RequestContext,
    configId: string,
    field: string | undefined,
    parts: AsyncIterable<MultipartPart>,
  ): Promise<UploadedAttachmentDto> {
    let uploaded: UploadedAttachmentDto | null = null;
    try {
      for await (const part of parts) {
        if (part.kind !== 'file' || uploaded) throw multipartInvalid('the body must be one file part');
        uploaded = await this.upload(ctx, configId, {
          field,
          partName: part.name,
          filename: part.filename,
          declaredLength: null,
          body: part.body,
        });
      }
    } catch (error) {
      if (uploaded) await this.discard([uploaded.attachmentId]);
      throw error;
    }
    if (!uploaded) throw multipartInvalid('the body has no file part');
    return uploaded;
  }

  /**
   * Removes uploads a refused request made (a record sent with its files that was not stored):
   * the attachments not linked to a record, and their bytes unless another upload shares them.
   */
  async discard(attachmentIds: string[]): Promise<void> {
    await this.content.remove(await this.repository.deleteUploads(attachmentIds));
  }

  /** Streams the body into the blob: hash, size limit, sniffed type (checked before the first write). */
  private async write(
    blobId: string,
    body: AsyncIterable<Buffer>,
    field: AttachmentField,
    maxBytes: number,
  ): Promise<{ sha256: string; size: number; mediaType: string }> {
    const hash = createHash('sha256');
    let size = 0;
    let mediaType: string | null = null;
    let held: Buffer[] = [];
    let heldBytes = 0;
    const writer = this.content.writer(blobId);
    const store = async (chunk: Buffer) => {
      if (mediaType === null) {
        mediaType = await sniffMediaType(chunk.subarray(0, SNIFF_BYTES));
        if (!mediaTypeAllowed(field, mediaType))
          throw new AppError('ATTACHMENT_TYPE_NOT_ALLOWED', {
            params: { mediaType },
            details: { mediaType, allowed: field.mediaTypes },
          });
      }
      await writer.write(chunk);
    };
    try {
      for await (const piece of body) {
        size += piece.length;
        if (size > maxBytes) throw tooLarge(maxBytes);
        hash.update(piece);
        held.push(piece);
        heldBytes += piece.length;
        while (heldBytes >= CHUNK_BYTES) {
          const all = held.length === 1 ? held[0] : Buffer.concat(held, heldBytes);
          await store(all.subarray(0, CHUNK_BYTES));
          const rest = all.subarray(CHUNK_BYTES);
          held = rest.length > 0 ? [rest] : [];
          heldBytes = rest.length;
        }
      }
      if (size === 0) throw new AppError('ATTACHMENT_EMPTY');
      if (heldBytes > 0) await store(Buffer.concat(held, heldBytes));
      await writer.finish();
    } finally {
      await writer.close();
    }
    return { sha256: hash.digest('hex'), size, mediaType: mediaType! };
  }
}

export function multipartInvalid(reason: string): AppError {
  return new AppError('MULTIPART_INVALID', { params: { reason }, details: { reason } });
}

function tooLarge(limit: number): AppError {
  return new AppError('ATTACHMENT_TOO_LARGE', { params: { limit }, details: { limit } });
}

function uploadLimit(limit: number): AppError {
  return new AppError('ATTACHMENT_UPLOAD_LIMIT_REACHED', {
    params: { limit },
    details: { perMinute: limit },
  });
}
