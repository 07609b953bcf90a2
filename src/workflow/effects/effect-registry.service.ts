import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, Reflector } from '@nestjs/core';
import { EFFECT_KIND, type EffectSender } from './effect-sender';

/**
 * Every effect kind of the application, found at boot among all providers by their `@EffectKind`
 * marker (as step types are); a kind registered twice stops the boot.
 */
@Injectable()
export class EffectRegistry implements OnModuleInit {
  private readonly senders = new Map<string, EffectSender>();

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly reflector: Reflector,
  ) {}

  onModuleInit(): void {
    for (const { metatype, instance } of this.discovery.getProviders()) {
      if (!metatype || typeof metatype !== 'function' || !instance) continue;
      const kind = this.reflector.get<string | undefined>(EFFECT_KIND, metatype);
      if (!kind) continue;
      if (this.senders.has(kind)) throw new Error(`Workflow effect kind "${kind}" is registered twice`);
      this.senders.set(kind, instance as EffectSender);
    }
  }

  get(kind: string): EffectSender | undefined {
    return this.senders.get(kind);
  }
}
