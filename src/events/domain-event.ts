import type { ChangeOrigin } from '../common/context/request-context';

/** Every event type the service reports (webhook subscriptions and workflow triggers name them). */
export const EVENT_TYPES = [
  'record.created',
  'record.updated',
  'record.deleted',
  'record.restored',
  /** A record stored by a bulk import: only for subscriptions and triggers that name it (README "Bulk import"). */
  'record.imported',
  /**
   * A draft saved (created or changed; README "Drafts"): only for subscriptions and triggers that
   * name it. Its submit is a `record.created`.
   */
  'record.draft_saved',
  'workflow.run.finished',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

export function isEventType(value: unknown): value is EventType {
  return typeof value === 'string' && (EVENT_TYPES as readonly string[]).includes(value);
}

/** An event as the dispatcher hands it to the consumers. */
export interface DomainEvent {
  /** Stable across redeliveries: consumers key what they do with it by this id. */
  id: string;
  type: EventType;
  occurredAt: Date;
  /** The site of the record or run; null for siteless ones. */
  siteId: string | null;
  configId: string | null;
  /** The user who caused it (for a run's end, the run's user). */
  actorId: string | null;
  origin: ChangeOrigin | null;
  /**
   * The public payload (a webhook's `data`): for record events `{record, changes, historyId}`, the
   * record as the API returns it; for `workflow.run.finished` `{run}`.
   */
  data: Record<string, unknown>;
}
