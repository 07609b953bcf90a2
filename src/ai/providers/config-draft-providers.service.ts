import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, Reflector } from '@nestjs/core';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import type { ConfigDraftGenerator } from './config-draft-provider';
import { CONFIG_DRAFT_PROVIDER, type ConfigDraftProviderOptions } from './config-draft-provider.decorator';

/**
 * Every configuration-draft provider of the application, found at boot among the providers of all
 * modules by their `@ConfigDraftProvider` marker. A name registered twice, or an `AI_PROVIDER` that
 * names none, stops the boot.
 */
@Injectable()
export class ConfigDraftProviders implements OnModuleInit {
  private readonly providers = new Map<string, { generator: ConfigDraftGenerator; className: string }>();

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly reflector: Reflector,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    for (const { metatype, instance } of this.discovery.getProviders()) {
      if (!metatype || typeof metatype !== 'function' || !instance) continue;
      const options = this.reflector.get<ConfigDraftProviderOptions | undefined>(
        CONFIG_DRAFT_PROVIDER,
        metatype,
      );
      if (!options) continue;
      const existing = this.providers.get(options.name);
      if (existing)
        throw new Error(
          `Configuration draft provider "${options.name}" is registered twice (${existing.className} and ${metatype.name})`,
        );
      if (typeof (instance as Partial<ConfigDraftGenerator>).generate !== 'function')
        throw new Error(
          `Configuration draft provider ${metatype.name} ("${options.name}") has no generate method`,
        );
      this.providers.set(options.name, {
        generator: instance as ConfigDraftGenerator,
        className: metatype.name,
      });
    }
    if (!this.providers.has(this.config.aiProvider))
      throw new Error(
        `AI_PROVIDER "${this.config.aiProvider}" names no configuration draft provider (known: ${this.names().join(', ')})`,
      );
  }

  /** The provider chosen by `AI_PROVIDER`, with its name. */
  active(): { name: string; generator: ConfigDraftGenerator } {
    const name = this.config.aiProvider;
    return { name, generator: this.providers.get(name)!.generator };
  }

  names(): string[] {
    return [...this.providers.keys()].sort();
  }
}
