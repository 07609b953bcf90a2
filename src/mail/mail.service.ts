import { Injectable, Logger } from '@nestjs/common';
import { MailerService } from '@nestjs-modules/mailer';
import type { OutgoingMail } from '../workflow/steps/step-handler';
import { toMailDeliveryError } from './mail-delivery.error';

export interface SentMail {
  messageId: string;
}

/** Sends one message through the configured transport (SMTP or the outbox folder). */
@Injectable()
export class MailService {
  private readonly logger = new Logger(MailService.name);

  constructor(private readonly mailer: MailerService) {}

  /** Resolves with the Message-ID once the server accepted it (or the file is written); throws a `MailDeliveryError`. */
  async send(mail: OutgoingMail): Promise<SentMail> {
    try {
      const info = await this.mailer.sendMail({
        to: mail.to,
        subject: mail.subject,
        ...(mail.html !== undefined ? { html: mail.html } : {}),
        ...(mail.text !== undefined ? { text: mail.text } : {}),
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
