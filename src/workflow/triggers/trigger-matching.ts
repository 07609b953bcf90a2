import { isEventType, type DomainEvent } from '../../events/domain-event';
import type { EventInterest } from '../../events/event-interest';
import type { ExecuteBody } from '../engine/run-launcher';

/** A workflow as trigger matching reads it. */
export interface TriggeredWorkflow {
  id: string;
  siteId: string | null;
  config: Record<string, unknown>;
}

/**
 * The events a workflow definition's triggers take, as event interests: a trigger's type, and its
 * `configId` (absent or null: any configuration).
 */
export function triggerInterests(config: Record<string, unknown>): EventInterest[] {
  const triggers = Array.isArray(config.triggers) ? (config.triggers as unknown[]) : [];
  return triggers.flatMap((trigger) => {
    if (trigger === null || typeof trigger !== 'object') return [];
    const { event: type, configId } = trigger as { event?: unknown; configId?: unknown };
    return isEventType(type) ? [{ type, configId: typeof configId === 'string' ? configId : null }] : [];
  });
}

/**
 * Whether the workflow's definition has a trigger on this event: the same type, and the trigger's
 * `configId` (if any) the event's. A workflow of a site takes only that site's events.
 */
export function triggersOn(workflow: TriggeredWorkflow, event: DomainEvent): boolean {
  if (workflow.siteId !== null && workflow.siteId !== event.siteId) return false;
  return triggerInterests(workflow.config).some(
    (trigger) =>
      trigger.type === event.type && (trigger.configId === null || trigger.configId === event.configId),
  );
}

/**
 * What a triggered run starts with: a record event's record `data` as `input` and the whole record
 * (as the API returns it) as `savedData`; a finished run's summary as `input`. Null when the event
 * names no configuration to run on.
 */
export function triggeredRunInput(
  event: DomainEvent,
): { body: ExecuteBody; savedData?: Record<string, unknown> } | null {
  if (!event.configId) return null;
  if (event.type === 'workflow.run.finished') {
    const run = objectOf(event.data.run);
    return run ? { body: { configId: event.configId, data: run } } : null;
  }
  const record = objectOf(event.data.record);
  const data = record && objectOf(record.data);
  return record && data ? { body: { configId: event.configId, data }, savedData: record } : null;
}

/** The run an event came from: the run whose step made the change, or the run that finished. */
export function originRunOf(event: DomainEvent): string | null {
  if (event.origin?.kind === 'workflow') return event.origin.runId;
  if (event.type === 'workflow.run.finished') {
    const id = objectOf(event.data.run)?.id;
    return typeof id === 'string' ? id : null;
  }
  return null;
}

function objectOf(value: unknown): Record<string, unknown> | null {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}
