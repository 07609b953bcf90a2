import type { WorkflowResponseDto, WorkflowRunDto } from './dto/workflow-response.dto';
import type { WorkflowRunRow } from './workflow-runs.repository';
import type { WorkflowRow } from './workflows.repository';

export function toWorkflowResponse(row: WorkflowRow): WorkflowResponseDto {
  return {
    id: row.id,
    name: row.name,
    alias: row.alias,
    description: row.description,
    type: row.type,
    config: row.config,
    permissions: { roles: row.permissions.roles ?? [], users: row.permissions.users ?? [] },
    tags: row.tags,
    siteId: row.siteId,
    isActive: row.isActive,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export function toRunResponse(row: WorkflowRunRow): WorkflowRunDto {
  return {
    id: row.id,
    workflowId: row.workflowId,
    userId: row.userId,
    configId: row.configId,
    dataId: row.dataId,
    status: row.status,
    message: row.message,
    steps: row.steps,
    durationMs: row.durationMs,
    startedAt: row.startedAt.toISOString(),
    finishedAt: row.finishedAt?.toISOString() ?? null,
  };
}
