import { parseRunTrigger } from './engine/model/stored-state';
import type { WorkflowResponseDto, WorkflowRunDto } from './dto/workflow-response.dto';
import type { WorkflowEffectRow } from './effects/workflow-effects.repository';
import type { WorkflowRunRow } from './engine/model/run-records';
import type { WorkflowRow } from './definitions/workflows.repository';

/** The parts of a definition, as a workflow and each of its kept versions answer them. */
export type DefinitionParts = Pick<
  WorkflowResponseDto,
  'name' | 'alias' | 'description' | 'type' | 'config' | 'permissions' | 'tags' | 'siteId' | 'isActive'
>;

export function definitionPartsOf(row: DefinitionParts): DefinitionParts {
  return {
    name: row.name,
    alias: row.alias,
    description: row.description,
    type: row.type,
    config: row.config,
    permissions: { roles: row.permissions.roles ?? [], users: row.permissions.users ?? [] },
    tags: row.tags,
    siteId: row.siteId,
    isActive: row.isActive,
  };
}

export function toWorkflowResponse(row: WorkflowRow): WorkflowResponseDto {
  return {
    id: row.id,
    ...definitionPartsOf(row),
    version: row.version,
    authorId: row.authorId,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export function toRunResponse(row: WorkflowRunRow, effects: WorkflowEffectRow[] = []): WorkflowRunDto {
  return {
    id: row.id,
    workflowId: row.workflowId,
    userId: row.userId,
    configId: row.configId,
    dataId: row.dataId,
    dataCompensated: row.dataId !== null && compensatedRecord(row.steps, row.dataId),
    status: row.status,
    message: row.message,
    steps: row.steps,
    durationMs: row.durationMs,
    startedAt: row.startedAt.toISOString(),
    finishedAt: row.finishedAt?.toISOString() ?? null,
    definitionVersion: row.definitionVersion,
    rerunOf: row.rerunOf,
    trigger: triggerOf(row.request),
    waitingFor: waitingFor(row),
    effects: effects.map((effect) => ({
      step: effect.stepName,
      kind: effect.kind,
      state: effect.state,
      attempts: effect.attempts,
      lastError: effect.lastError ?? null,
    })),
  };
}

/** Whether a step's compensation deactivated the record `dataId` (a rolled-back save). */
function compensatedRecord(steps: unknown[], dataId: string): boolean {
  return steps.some((step) => {
    const { status, compensation } = (step ?? {}) as {
      status?: unknown;
      compensation?: { dataId?: unknown };
    };
    return status === 'compensated' && compensation?.dataId === dataId;
  });
}

/** Where a waiting run waits (from its checkpoint), for the caller who may decide. */
function waitingFor(row: WorkflowRunRow): WorkflowRunDto['waitingFor'] {
  if (row.status !== 'waiting') return null;
  const waiting = (row.checkpoint as { waiting?: { step?: unknown; until?: unknown } } | null)?.waiting;
  if (typeof waiting?.step !== 'string') return null;
  const until = typeof waiting.until === 'number' ? new Date(waiting.until).toISOString() : null;
  return { step: waiting.step, until };
}

/** The event that queued the run, as its stored request names it. */
function triggerOf(request: unknown): WorkflowRunDto['trigger'] {
  const trigger = parseRunTrigger((request as { trigger?: unknown } | null)?.trigger);
  return trigger
    ? {
        eventId: trigger.eventId,
        event: trigger.event,
        depth: trigger.depth,
        rootEventId: trigger.rootEventId,
        chain: trigger.chain,
      }
    : null;
}
