import type { Readable } from 'node:stream';
import { Injectable, Logger } from '@nestjs/common';
import { MailerService } from '@nestjs-modules/mailer';
import { toMailDeliveryError } from './mail-delivery.error';

/** One e-mail to send: recipients (comma-separated), subject, and an HTML and/or a plain body. */
export interface OutgoingMail {
  to: string;
  subject: string;
  html?: string;
  text?: string;
}

/** A file attached to a mail: its bytes are read from the stream while the message is sent. */
export interface MailAttachment {
  filename: string;
  contentType: string;
  content: Readable;
}

export interface SentMail {
  messageId: string;
}

/** Sends one message through the configured transport (SMTP or the outbox folder). */
@Injectable()
export class MailService {
  private readonly logger = new Logger(MailService.name);

  constructor(private readonly mailer: MailerService) {}

  /**
   * `messageId` fixes the Message-ID (the same message sent again keeps its identity); `attachments`
   * are read from their streams while the message is sent.
   * Resolves with the Message-ID once the server accepted it (or the file is written); throws a `MailDeliveryError`. */
  async send(
    mail: OutgoingMail,
    options: { messageId?: string; attachments?: MailAttachment[] } = {},
  ): Promise<SentMail> {
    try {
      const info = await this.mailer.sendMail({
        ...(options.messageId ? { messageId: options.messageId } : {}),
        to: mail.to,
        subject: mail.subject,
        ...(mail.html !== undefined ? { html: mail.html } : {}),
        ...(mail.text !== undefined ? { text: mail.text } : {}),
        // Streamed into the message as it is sent (base64), never whole in memory.
        ...(options.attachments?.length ? { attachments: options.attachments } : {}),
      });
      const messageId = String(info?.messageId ?? '');
      this.logger.debug(`Mail ${messageId} sent`);
      return { messageId };
    } catch (error) {
      const failure = toMailDeliveryError(error);
      // Only the classified message: never the transport options (SMTP_URL may carry a password).
      this.logger.warn(`Mail not sent: ${failure.message}`);
      throw failure;
    }
  }
}
