import { resolve } from 'node:path';
import type { MailerOptions } from '@nestjs-modules/mailer';
import type { AppConfig } from '../config/app-config';
import { OutboxTransport } from './outbox-transport';

/** Where messages go without SMTP_URL: `DATA_DIR/outbox`, resolved from the working directory. */
export function outboxDir(config: Pick<AppConfig, 'dataDir'>): string {
  return resolve(config.dataDir, 'outbox');
}

/**
 * The mailer's options: SMTP from `SMTP_URL` (smtp:// or smtps://, credentials and query options as
 * nodemailer parses them), else `.eml` files in the outbox. No template adapter: bodies arrive
 * rendered, and nothing the mailer could interpolate (`context`) is ever passed.
 */
export function mailerOptions(config: AppConfig): MailerOptions {
  const transport = config.smtpUrl
    ? { url: config.smtpUrl, connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 }
    : new OutboxTransport(outboxDir(config));
  return { transport, defaults: { from: config.mailFrom }, verifyTransporters: false };
}
