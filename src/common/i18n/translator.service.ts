import { Injectable } from '@nestjs/common';
import { I18nService } from 'nestjs-i18n';
import type { Locale } from './locale';

/** Message lookup by key and locale; falls back to English, then to the key itself. */
@Injectable()
export class Translator {
  constructor(private readonly i18n: I18nService) {}

  translate(key: string, locale: Locale, params: Record<string, unknown> = {}): string {
    const text = this.i18n.translate(key, { lang: locale, args: params, defaultValue: key });
    return typeof text === 'string' ? text : key;
  }

  /** A message given either as an i18n key or as an inline `{en, hu}` object. */
  translateMessage(
    message: string | Record<string, string>,
    locale: Locale,
    params: Record<string, unknown> = {},
  ) {
    if (typeof message === 'string') return this.translate(message, locale, params);
    return message[locale] ?? message.en ?? Object.values(message)[0] ?? '';
  }
}
