import { Inject, Injectable, Logger } from '@nestjs/common';
import { MAILER_OPTIONS, type MailerOptions, type MailerTransportFactory } from '@nestjs-modules/mailer';
import { createTransport } from 'nodemailer';

/**
 * The mailer's transports, as `@nestjs-modules/mailer` would create them, each with an 'error'
 * listener. nodemailer re-emits a transport's own errors (an OAuth2 token it cannot renew, for a
 * pooled or single SMTP transport) as an 'error' event of the transporter, which nobody listened to:
 * unhandled, an event ends the process. A message's own failure still reaches its `sendMail` call.
 */
@Injectable()
export class ListenedTransportFactory implements MailerTransportFactory {
  private readonly logger = new Logger('Mail');

  constructor(@Inject(MAILER_OPTIONS) private readonly options: MailerOptions) {}

  createTransport(
    options?: MailerOptions['transport'],
  ): ReturnType<MailerTransportFactory['createTransport']> {
    const transporter = createTransport(
      (options ?? this.options.transport) as Parameters<typeof createTransport>[0],
      this.options.defaults,
    ) as ReturnType<MailerTransportFactory['createTransport']>;
    transporter.on('error', (error: Error) =>
      this.logger.warn({
        msg: `SMTP transport error: ${error.message}`,
        dependency: 'smtp',
        code: 'SMTP_TRANSPORT_ERROR',
      }),
    );
    return transporter;
  }
}
