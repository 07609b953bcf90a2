import { Inject } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { MailService, type OutgoingMail } from '../../mail/mail.service';
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
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.domain = /@([^>\s]+)>?\s*$/.exec(config.mailFrom)?.[1] ?? 'workflow.invalid';
  }

  payloadProblem(payload: Record<string, unknown>): string | null {
    return mailPayloadProblem(payload);
  }

  async send(effect: OutboxEffect): Promise<void> {
    try {
      await this.mail.send(outgoingMail(effect.payload), {
        messageId: `<run.${effectKey(effect)}@${this.domain}>`,
      });
    } catch (error) {
      // MailDeliveryError: a classified message (no credentials, no server text), retryable on 4xx or no connection.
      const failure = toMailDeliveryError(error);
      throw new EffectError('MAIL_DELIVERY_FAILED', failure.message, failure.retryable);
    }
  }
}

/** Why a payload is not a mail (`{to, subject, html?, text?}`, one body at least), or null. */
export function mailPayloadProblem(payload: Record<string, unknown>): string | null {
  if (typeof payload.to !== 'string' || payload.to === '') return 'a mail needs "to"';
  if (typeof payload.subject !== 'string') return 'a mail needs "subject"';
  if (typeof payload.html !== 'string' && typeof payload.text !== 'string')
    return 'a mail needs "html" or "text"';
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
