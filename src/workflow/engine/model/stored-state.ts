import { AppError } from '../../../common/errors/app-error';
import { isEventType } from '../../../events/domain-event';
import {
  CHECKPOINT_VERSION,
  type HeldEffect,
  type RunCheckpoint,
  type RunRequest,
  type RunTrigger,
  type StepDefinition,
  type StepLog,
  type WorkflowDefinition,
} from './run-model';

/**
 * Parsers of what a run reads back from the database (jsonb): the definition, the run request, the
 * checkpoint and the step log. The definition was validated when it was saved and the rest was
 * written by the engine, so a mismatch means a damaged row: it ends the run with a stable code
 * (WORKFLOW_STATE_INVALID) instead of failing somewhere deep inside a step.
 */

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function invalid(what: string): AppError {
  return new AppError('WORKFLOW_STATE_INVALID', { params: { what } });
}

export function parseDefinition(value: unknown): WorkflowDefinition {
  if (!isObject(value) || !Array.isArray(value.steps)) throw invalid('definition');
  const steps: StepDefinition[] = value.steps.map((step: unknown) => {
    if (!isObject(step) || typeof step.name !== 'string' || typeof step.type !== 'string')
      throw invalid('definition');
    // The rest was checked field by field when the definition was saved (class-validator).
    return { ...step, name: step.name, type: step.type };
  });
  return { ...value, steps };
}

export function parseRunRequest(value: unknown): RunRequest {
  if (
    !isObject(value) ||
    typeof value.configId !== 'string' ||
    !isObject(value.data) ||
    !isObject(value.actor) ||
    typeof value.actor.userId !== 'string'
  )
    throw invalid('run request');
  const trigger = parseRunTrigger(value.trigger);
  return {
    configId: value.configId,
    data: value.data,
    formTitle: typeof value.formTitle === 'string' ? value.formTitle : null,
    actor: {
      userId: value.actor.userId,
      email: typeof value.actor.email === 'string' ? value.actor.email : '',
      role: typeof value.actor.role === 'string' ? value.actor.role : '',
      siteId: typeof value.actor.siteId === 'string' ? value.actor.siteId : null,
    },
    siteId: typeof value.siteId === 'string' ? value.siteId : null,
    locale: value.locale === 'hu' ? 'hu' : 'en',
    requestId: typeof value.requestId === 'string' ? value.requestId : '',
    mode: value.mode === 'sync' ? 'sync' : 'async',
    ...(typeof value.traceparent === 'string' ? { traceparent: value.traceparent } : {}),
    ...(trigger ? { trigger } : {}),
    ...(isObject(value.savedData) ? { savedData: value.savedData } : {}),
  };
}

/**
 * A stored run request's `trigger` (the event that queued the run), or null. One stored before
 * chains were kept is its own root and carries no chain (whoever reads the chain adds the run's own
 * workflow).
 */
export function parseRunTrigger(value: unknown): RunTrigger | null {
  if (
    !isObject(value) ||
    typeof value.eventId !== 'string' ||
    !isEventType(value.event) ||
    typeof value.depth !== 'number'
  )
    return null;
  return {
    eventId: value.eventId,
    event: value.event,
    depth: value.depth,
    rootEventId: typeof value.rootEventId === 'string' ? value.rootEventId : value.eventId,
    chain: Array.isArray(value.chain) ? value.chain.filter((id) => typeof id === 'string') : [],
  };
}

/**
 * A stored checkpoint; one written before checkpoints had a version (held mail under `heldMail`,
 * no `dataId`) is read as the current shape, so runs in flight across an upgrade still resume.
 */
export function parseCheckpoint(value: unknown): RunCheckpoint {
  if (!isObject(value) || !isObject(value.scope) || typeof value.startedAt !== 'number')
    throw invalid('checkpoint');
  const scope = value.scope;
  if (!isObject(scope.input)) throw invalid('checkpoint');
  const effects: HeldEffect[] =
    value.version === undefined ? heldMailOfVersion1(value.heldMail) : arrayOf(value.effects);
  const savedData = scope.savedData;
  return {
    version: CHECKPOINT_VERSION,
    scope: { ...scope, input: scope.input, results: isObject(scope.results) ? scope.results : {} },
    completed: arrayOf(value.completed),
    effects,
    lastFailure: (value.lastFailure as RunCheckpoint['lastFailure']) ?? null,
    pendingRetry: (value.pendingRetry as RunCheckpoint['pendingRetry']) ?? null,
    dataId:
      typeof value.dataId === 'string'
        ? value.dataId
        : isObject(savedData) && typeof savedData._id === 'string'
          ? savedData._id
          : null,
    startedAt: value.startedAt,
    waiting: isObject(value.waiting) ? (value.waiting as unknown as RunCheckpoint['waiting']) : null,
    signal: isObject(value.signal) ? (value.signal as unknown as RunCheckpoint['signal']) : null,
    pausedMs: typeof value.pausedMs === 'number' ? value.pausedMs : 0,
  };
}

export function parseStepLogs(value: unknown): StepLog[] {
  return arrayOf<StepLog>(value);
}

function arrayOf<T>(value: unknown): T[] {
  return Array.isArray(value) ? (value as T[]) : [];
}

/** Version 1 held mail: `[{index, mail}]`, one mail per step at most. */
function heldMailOfVersion1(value: unknown): HeldEffect[] {
  return arrayOf<{ index: number; mail: Json }>(value).map((held) => ({
    index: held.index,
    seq: 0,
    step: '',
    kind: 'mail',
    payload: held.mail,
  }));
}
