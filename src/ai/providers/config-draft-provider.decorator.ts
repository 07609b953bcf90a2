import { applyDecorators, Injectable, SetMetadata } from '@nestjs/common';

export const CONFIG_DRAFT_PROVIDER = Symbol('config-draft-provider');

export interface ConfigDraftProviderOptions {
  /** The value of `AI_PROVIDER` that selects it; unique across the application (a duplicate fails the boot). */
  name: string;
}

/** Marks a provider as a configuration-draft provider (see `ConfigDraftGenerator`). */
export function ConfigDraftProvider(options: ConfigDraftProviderOptions): ClassDecorator {
  return applyDecorators(Injectable(), SetMetadata(CONFIG_DRAFT_PROVIDER, options));
}
