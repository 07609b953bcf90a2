import { join } from 'node:path';
import type { DynamicModule, Provider } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { I18nModule } from 'nestjs-i18n';
import { RequestLocaleResolver } from './request-locale.resolver';

function isGlobalInterceptor(provider: Provider): boolean {
  return typeof provider === 'object' && 'provide' in provider && provider.provide === APP_INTERCEPTOR;
}

/**
 * nestjs-i18n's translations for the Translator. The module's global interceptor is left out: it
 * only resolves a language per request, which the `onRequest` hook already did (`request.locale`,
 * passed to every translation), and an interceptor wraps every request of every route in
 * observables and async-context bindings, a measurable share of a create's CPU.
 */
export function i18nCoreModule(): DynamicModule {
  const module = I18nModule.forRoot({
    fallbackLanguage: 'en',
    // From the working directory so `dist/` finds the same files (docs/design.md section 2).
    loaderOptions: { path: join(process.cwd(), 'i18n'), watch: false },
    resolvers: [new RequestLocaleResolver()],
    disableMiddleware: true,
    skipAsyncHook: true,
    logging: false,
  });
  return { ...module, providers: (module.providers ?? []).filter((p) => !isGlobalInterceptor(p)) };
}
