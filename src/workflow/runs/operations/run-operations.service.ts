import { Inject, Injectable } from '@nestjs/common';
import { keepRequest } from '../../../common/context/kept-request';
import { requireAdmin, type RequestContext } from '../../../common/context/request-context';
import { ownSiteScopeOf } from '../../../common/context/site-scope';
import { AppError } from '../../../common/errors/app-error';
import { APP_CONFIG, type AppConfig } from '../../../config/app-config';
import type {
  BulkCancelDto,
  BulkRerunDto,
  OperationAcceptedDto,
  RunOperationDto,
} from '../../dto/run-operation.dto';
import { WORKFLOW_INSTANCE } from '../../engine/queue/workflow-instance';
import { RunHistoryRepository, type RunFilter } from '../run-history.repository';
import { WorkflowsService } from '../../definitions/workflows.service';
import { RunOperationProcessor, type OperationRequest } from './run-operation.processor';
import { RunOperationsRepository, type RunOperationRow } from './run-operations.repository';

/** The most runs one operation takes; a filter matching more is refused (422), never cut silently. */
export const MAX_OPERATION_RUNS = 1000;

const DEFAULT_STATUSES = {
  cancel: ['queued', 'running', 'waiting'],
  rerun: ['success', 'failed', 'rolled_back', 'cancelled'],
};

/**
 * Bulk operations on a workflow's runs (admins only): the filter is matched when the request is
 * accepted (at most MAX_OPERATION_RUNS runs), the ids are stored with the operation, and the
 * accepting instance works through them in the background (RunOperationProcessor).
 */
@Injectable()
export class RunOperationsService {
  constructor(
    private readonly operations: RunOperationsRepository,
    private readonly runs: RunHistoryRepository,
    private readonly workflows: WorkflowsService,
    private readonly processor: RunOperationProcessor,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(WORKFLOW_INSTANCE) private readonly instance: string,
  ) {}

  async start(
    ctx: RequestContext,
    workflowId: string,
    kind: 'cancel' | 'rerun',
    body: BulkCancelDto | BulkRerunDto,
  ): Promise<OperationAcceptedDto> {
    const user = requireAdmin(ctx);
    const workflow = await this.workflows.requireVisible(ctx, workflowId);
    const filter: RunFilter = {
      statuses: body.filter?.status ?? DEFAULT_STATUSES[kind],
      from: body.filter?.from ? new Date(body.filter.from) : undefined,
      to: body.filter?.to ? new Date(body.filter.to) : undefined,
      userId: body.filter?.userId,
    };
    const runIds = await this.runs.idsMatching(
      workflow.id,
      ownSiteScopeOf(ctx),
      filter,
      MAX_OPERATION_RUNS + 1,
    );
    if (runIds.length > MAX_OPERATION_RUNS)
      throw new AppError('WORKFLOW_OPERATION_TOO_LARGE', {
        params: { max: MAX_OPERATION_RUNS },
        details: { max: MAX_OPERATION_RUNS },
      });
    const request: OperationRequest = {
      ...keepRequest(ctx, user),
      filter: { ...body.filter },
      ...(kind === 'rerun' && 'from' in body
        ? { rerun: { from: body.from, definition: body.definition ?? 'original' } }
        : {}),
    };
    const operation = await this.operations.insert(
      {
        workflowId: workflow.id,
        kind,
        request: { ...request },
        runIds,
        matched: runIds.length,
        userId: user.userId,
      },
      this.instance,
      this.config.workflowLeaseMs,
    );
    this.processor.start(operation);
    return { operationId: operation.id };
  }

  async get(ctx: RequestContext, operationId: string): Promise<RunOperationDto> {
    requireAdmin(ctx);
    const operation = await this.operations.findById(operationId);
    if (!operation) throw new AppError('WORKFLOW_OPERATION_NOT_FOUND');
    return toOperationResponse(operation);
  }
}

function toOperationResponse(row: RunOperationRow): RunOperationDto {
  return {
    id: row.id,
    workflowId: row.workflowId,
    kind: row.kind,
    status: row.status,
    matched: row.matched,
    done: row.done,
    failed: row.failed,
    failures: row.failures,
    createdAt: row.createdAt.toISOString(),
    finishedAt: row.finishedAt?.toISOString() ?? null,
  };
}
