import { Inject } from '@nestjs/common';
import { AttachmentsService } from '../../attachments/attachments.service';
import { AppError } from '../../common/errors/app-error';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { MailService, type MailAttachment, type OutgoingMail } from '../../mail/mail.service';
import { toMailDeliveryError } from '../../mail/mail-delivery.error';
import { EffectError, EffectKind, effectKey, type EffectSender, type OutboxEffect } from './effect-sender';

/**
 * The built-in `mail` effect: an OutgoingMail sent through MailService. Its Message-ID comes from
 * the effect's key, so a message sent again after a crash (accepted by SMTP, not yet marked sent)
 * carries the same Message-ID and the receiving side can drop the copy.
 */
@EffectKind('mail')
export class MailEffectSender implements EffectSender {
  private readonly domain: string;

  constructor(
    private readonly mail: MailService,
    private readonly attachments: AttachmentsService,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.domain = /@([^>\s]+)>?\s*$/.exec(config.mailFrom)?.[1] ?? 'workflow.invalid';
  }

  payloadProblem(payload: Record<string, unknown>): string | null {
    return mailPayloadProblem(payload);
  }

  /**
   * The attached files' streams, opened at each attempt (nothing is read before the message is
   * sent). A file gone since the step (its record purged) fails the mail for good.
   */
  private async openFiles(files: MailFile[]): Promise<MailAttachment[]> {
    const opened: MailAttachment[] = [];
    for (const file of files) {
      try {
        const download = await this.attachments.open(file.recordId, file.attachmentId);
        opened.push({ filename: file.filename, contentType: file.mediaType, content: download.body });
      } catch (error) {
        if (error instanceof AppError && error.code === 'ATTACHMENT_NOT_FOUND')
          throw EffectError.fatal(
            'MAIL_ATTACHMENT_GONE',
            `the file ${file.attachmentId} is no longer stored`,
          );
        throw EffectError.retryable(
          'MAIL_ATTACHMENT_UNREADABLE',
          `the file ${file.attachmentId} cannot be read now`,
        );
      }
    }
    return opened;
  }

  async send(effect: OutboxEffect): Promise<void> {
    const attachments = await this.openFiles(mailFilesOf(effect.payload));
    try {
      await this.mail.send(outgoingMail(effect.payload), {
        messageId: `<run.${effectKey(effect)}@${this.domain}>`,
        attachments,
      });
    } catch (error) {
      // MailDeliveryError: a classified message (no credentials, no server text), retryable on 4xx or no connection.
      const failure = toMailDeliveryError(error);
      throw new EffectError('MAIL_DELIVERY_FAILED', failure.message, failure.retryable);
    }
  }
}

/** A record's file a mail attaches: the step checked that the run's caller may read it. */
export interface MailFile {
  recordId: string;
  attachmentId: string;
  filename: string;
  mediaType: string;
}

function mailFilesOf(payload: Record<string, unknown>): MailFile[] {
  return Array.isArray(payload.files) ? (payload.files as MailFile[]) : [];
}

/** Why a payload is not a mail (`{to, subject, html?, text?}`, one body at least), or null. */
export function mailPayloadProblem(payload: Record<string, unknown>): string | null {
  if (typeof payload.to !== 'string' || payload.to === '') return 'a mail needs "to"';
  if (typeof payload.subject !== 'string') return 'a mail needs "subject"';
  if (typeof payload.html !== 'string' && typeof payload.text !== 'string')
    return 'a mail needs "html" or "text"';
  const files = payload.files;
  if (files !== undefined) {
    const fields = ['recordId', 'attachmentId', 'filename', 'mediaType'] as const;
    const isFile = (file: unknown) =>
      file !== null &&
      typeof file === 'object' &&
      fields.every((field) => typeof (file as Record<string, unknown>)[field] === 'string');
    if (!Array.isArray(files) || !files.every(isFile))
      return '"files" must be a list of {recordId, attachmentId, filename, mediaType}';
  }
  return null;
}

/** The payload (checked by `payloadProblem` when it was enqueued) as the mail service takes it. */
function outgoingMail(payload: Record<string, unknown>): OutgoingMail {
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
  return {
    to: String(payload.to),
    subject: String(payload.subject),
    ...(text(payload.html) !== undefined ? { html: text(payload.html) } : {}),
    ...(text(payload.text) !== undefined ? { text: text(payload.text) } : {}),
  };
}
