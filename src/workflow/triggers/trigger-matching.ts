import { isEventType, type DomainEvent } from '../../events/domain-event';
import type { EventInterest } from '../../events/event-interest';
import type { ExecuteBody } from '../engine/model/run-model';

/** A workflow as trigger matching reads it. */
export interface TriggeredWorkflow {
  id: string;
  siteId: string | null;
  config: Record<string, unknown>;
  /** Who last saved the definition (null: saved before it was kept). */
  authorId: string | null;
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
 * Whom a trigger's run runs as: the record's owner (the default; for a finished run, the run's
 * user), the workflow's author (who last saved its definition), or a named user.
 */
export type RunAs = 'owner' | 'author' | { user: string };

/** A trigger as matching reads it from a stored definition. */
export interface WorkflowTrigger {
  type: EventInterest['type'];
  configId: string | null;
  runAs: RunAs;
}

/** A stored trigger's `runAs`; absent (or unreadable, which a saved definition never holds) is `owner`. */
export function runAsOf(value: unknown): RunAs {
  if (value === 'author') return 'author';
  const user = objectOf(value)?.user;
  return typeof user === 'string' ? { user } : 'owner';
}

/**
 * The workflow's first trigger on this event: the same type, and the trigger's `configId` (if any)
 * the event's; null when none. A workflow of a site takes only that site's events (a shared one,
 * every site's: its run is then checked against the event's site, see WorkflowTriggerConsumer).
 */
export function triggerOn(workflow: TriggeredWorkflow, event: DomainEvent): WorkflowTrigger | null {
  if (workflow.siteId !== null && workflow.siteId !== event.siteId) return null;
  const triggers = Array.isArray(workflow.config.triggers) ? (workflow.config.triggers as unknown[]) : [];
  for (const trigger of triggers) {
    const fields = objectOf(trigger);
    if (!fields || fields.event !== event.type) continue;
    const configId = typeof fields.configId === 'string' ? fields.configId : null;
    if (configId === null || configId === event.configId)
      return { type: event.type, configId, runAs: runAsOf(fields.runAs) };
  }
  return null;
}

/**
 * The user a trigger's run runs as, or null when there is none to name: the owner of the event's
 * record (a finished run: the run's user), the workflow's author, or the named user.
 */
export function runAsUserOf(runAs: RunAs, event: DomainEvent, authorId: string | null): string | null {
  if (runAs === 'author') return authorId;
  if (runAs !== 'owner') return runAs.user;
  if (event.type === 'workflow.run.finished') return event.actorId;
  const owner = objectOf(event.data.record)?.userId;
  return typeof owner === 'string' ? owner : null;
}

/**
 * The users a definition's triggers name to run as (`runAs: {user}`), for the check when it is
 * saved: only an admin may name anybody but themselves.
 */
export function namedRunAsUsers(config: Record<string, unknown>): string[] {
  const triggers = Array.isArray(config.triggers) ? (config.triggers as unknown[]) : [];
  return triggers.flatMap((trigger) => {
    const runAs = runAsOf(objectOf(trigger)?.runAs);
    return typeof runAs === 'object' ? [runAs.user] : [];
  });
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
