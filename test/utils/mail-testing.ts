import { join } from 'node:path';
import type { LoggerService } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { AcceptLanguageResolver, I18nModule } from 'nestjs-i18n';
import { I18nSupportModule } from '../../src/common/i18n/i18n-support.module';
import { loadConfig, type AppConfig } from '../../src/config/app-config';
import { AppConfigModule } from '../../src/config/config.module';

/** Every line a Nest logger was asked to write, for "nothing secret in the logs" assertions. */
export class CapturingLogger implements LoggerService {
  readonly lines: string[] = [];
  log = (...args: unknown[]) => this.capture('log', args);
  error = (...args: unknown[]) => this.capture('error', args);
  warn = (...args: unknown[]) => this.capture('warn', args);
  debug = (...args: unknown[]) => this.capture('debug', args);
  verbose = (...args: unknown[]) => this.capture('verbose', args);
  private capture(level: string, args: unknown[]) {
    this.lines.push(
      `${level} ${args.map((arg) => (typeof arg === 'string' ? arg : JSON.stringify(arg))).join(' ')}`,
    );
  }
}

export interface MailTestingModule {
  moduleRef: TestingModule;
  config: AppConfig;
  logger: CapturingLogger;
}

/**
 * A Nest testing module with a real APP_CONFIG (from `loadConfig(env)`), the real i18n files and
 * the given modules (e.g. `MailModule`, `NotifyStepModule`): no server, no database.
 */
export async function createMailTestingModule(
  env: Record<string, string>,
  imports: NonNullable<Parameters<typeof Test.createTestingModule>[0]>['imports'] = [],
): Promise<MailTestingModule> {
  const config = loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent', ...env });
  const logger = new CapturingLogger();
  const moduleRef = await Test.createTestingModule({
    imports: [
      AppConfigModule.forRoot(config),
      I18nModule.forRoot({
        fallbackLanguage: 'en',
        loaderOptions: { path: join(process.cwd(), 'i18n'), watch: false },
        resolvers: [AcceptLanguageResolver],
        logging: false,
      }),
      I18nSupportModule,
      ...(imports ?? []),
    ],
  })
    .setLogger(logger)
    .compile();
  await moduleRef.init();
  return { moduleRef, config, logger };
}
