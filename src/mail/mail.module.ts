import { Module } from '@nestjs/common';
import { MAILER_TRANSPORT_FACTORY, MailerModule } from '@nestjs-modules/mailer';
import { APP_CONFIG } from '../config/app-config';
import { AdminNotifier } from './admin-notifier.service';
import { ListenedTransportFactory } from './listened-transport.factory';
import { mailerOptions } from './mailer-options';
import { MailService } from './mail.service';

/**
 * Mail for the whole service: `@nestjs-modules/mailer` over SMTP (`SMTP_URL`) or the `.eml` outbox
 * (`DATA_DIR/outbox`), sender `MAIL_FROM`. Import it wherever mail is sent; the mailer is configured once.
 * Needs the global `APP_CONFIG` and `Translator` (AppConfigModule, I18nSupportModule).
 */
@Module({
  imports: [
    MailerModule.forRootAsync({
      inject: [APP_CONFIG],
      useFactory: mailerOptions,
      extraProviders: [{ provide: MAILER_TRANSPORT_FACTORY, useClass: ListenedTransportFactory }],
    }),
  ],
  providers: [MailService, AdminNotifier],
  exports: [MailService, AdminNotifier],
})
export class MailModule {}
