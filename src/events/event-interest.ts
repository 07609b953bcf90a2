import type { EventType } from './domain-event';

/** Events somebody takes: of this type, for this configuration (null: any configuration). */
export interface EventInterest {
  type: EventType;
  configId: string | null;
}
