import { Injectable } from '@nestjs/common';
import { AppCache, CACHE_TTL } from '../../common/cache/app-cache.service';
import { requireUser, type AuthUser, type RequestContext } from '../../common/context/request-context';
import { isVisibleInScope, siteScopeOf } from '../../common/context/site-scope';
import { isUuid } from '../../common/validation/is-uuid';
import { AppError } from '../../common/errors/app-error';
import {
  expectedVersions,
  NO_PRECONDITION,
  preconditionFailed,
  type IfMatch,
} from '../../common/http/conditional-requests';
import { SitesService } from '../../sites/sites.service';
import type { WorkflowListDto, WorkflowResponseDto } from '../dto/workflow-response.dto';
import type { WorkflowVersionDto, WorkflowVersionListDto } from '../dto/workflow-version.dto';
import type {
  CreateWorkflowDto,
  ListWorkflowsQueryDto,
  UpdateWorkflowDto,
} from '../dto/workflow-definition.dto';
import { WorkflowDefinitionValidator } from './workflow-definition.validator';
import { toVersionResponse, toVersionSummaries } from './workflow-version.mapper';
import { toWorkflowResponse } from '../workflow.mapper';
import { WorkflowsRepository, type WorkflowRow } from './workflows.repository';
import { EventInterests } from '../../events/event-interests.service';
import { assertRunAsAllowed } from '../triggers/run-as-policy';
import { triggerInterests } from '../triggers/trigger-matching';

/**
 * Workflow definitions: admins (or roles granted `workflows:*`) write them; everyone reads the ones
 * they may run. Tenant rules as for configurations: another site's workflow is a 404, and a
 * non-admin writes only in their own site (SitesService.siteOfNewDefinition).
 */
@Injectable()
export class WorkflowsService {
  constructor(
    private readonly workflows: WorkflowsRepository,
    private readonly definitions: WorkflowDefinitionValidator,
    private readonly sites: SitesService,
    private readonly cache: AppCache,
    private readonly interests: EventInterests,
  ) {}

  async list(ctx: RequestContext, query: ListWorkflowsQueryDto): Promise<WorkflowListDto> {
    const user = requireUser(ctx);
    const isAdmin = user.role === 'admin';
    const tags = query.tags
      ?.split(',')
      .map((tag) => tag.trim())
      .filter(Boolean);
    const { rows, total } = await this.workflows.listInScope(siteScopeOf(ctx), {
      type: query.type,
      tags,
      isActive: isAdmin ? query.isActive !== 'false' : true,
      runnableBy: isAdmin ? undefined : { role: user.role, userId: user.userId },
    });
    return { data: rows.map(toWorkflowResponse), totalCount: total };
  }

  /** A workflow the caller may not run is a 404 here, as it is absent from their list. */
  async get(ctx: RequestContext, workflowId: string): Promise<WorkflowResponseDto> {
    const row = await this.requireVisible(ctx, workflowId);
    if (!this.mayRun(requireUser(ctx), row)) throw new AppError('WORKFLOW_NOT_FOUND');
    return toWorkflowResponse(row);
  }

  /** The workflow's kept versions, newest first; readable by whoever may read the workflow (else 404). */
  async versions(ctx: RequestContext, workflowId: string): Promise<WorkflowVersionListDto> {
    await this.get(ctx, workflowId);
    const rows = await this.workflows.versionsOf(workflowId);
    return { data: toVersionSummaries(rows), totalCount: rows.length };
  }

  /** One kept version (404 `WORKFLOW_VERSION_NOT_FOUND` for anything but the number of a kept one). */
  async version(ctx: RequestContext, workflowId: string, version: string): Promise<WorkflowVersionDto> {
    await this.get(ctx, workflowId);
    const kept = /^[1-9][0-9]{0,8}$/.test(version)
      ? (await this.workflows.versionsOf(workflowId)).find((row) => row.version === Number(version))
      : undefined;
    if (!kept) throw new AppError('WORKFLOW_VERSION_NOT_FOUND', { params: { version } });
    return toVersionResponse(kept);
  }

  async create(ctx: RequestContext, body: CreateWorkflowDto): Promise<WorkflowResponseDto> {
    const author = requireUser(ctx);
    const siteId = await this.sites.siteOfNewDefinition(ctx, body.siteId);
    await this.definitions.assertValid(ctx, body.config);
    assertRunAsAllowed(author, body.config as unknown as Record<string, unknown>);
    // Declared first: a change committed once the workflow is stored writes the event it waits for.
    await this.interests.declare(triggerInterests(body.config as unknown as Record<string, unknown>));
    const row = await this.workflows.insert(
      {
        name: body.name,
        alias: body.alias ?? null,
        description: body.description ?? null,
        type: body.type,
        config: body.config as unknown as Record<string, unknown>,
        permissions: { roles: body.permissions?.roles ?? [], users: body.permissions?.users ?? [] },
        tags: body.tags ?? [],
        siteId,
        isActive: body.isActive ?? true,
        authorId: author.userId,
      },
      author.userId,
    );
    return toWorkflowResponse(row);
  }

  /**
   * Writes the given fields (the others are left as stored, in the same update) as a new version;
   * with If-Match only while the workflow is at that version (else 412).
   */
  async update(
    ctx: RequestContext,
    workflowId: string,
    body: UpdateWorkflowDto,
    ifMatch: IfMatch = NO_PRECONDITION,
  ): Promise<WorkflowResponseDto> {
    const current = await this.requireVisible(ctx, workflowId);
    await this.sites.requireDefinitionChange(ctx, current.siteId, body.siteId);
    const author = requireUser(ctx);
    if (body.config) {
      await this.definitions.assertValid(ctx, body.config);
      assertRunAsAllowed(author, body.config as unknown as Record<string, unknown>);
    }
    await this.interests.declare(
      triggerInterests((body.config as unknown as Record<string, unknown> | undefined) ?? current.config),
    );
    const row = await this.workflows.updateActive(
      workflowId,
      {
        name: body.name,
        alias: body.alias,
        description: body.description,
        type: body.type,
        config: body.config as unknown as Record<string, unknown> | undefined,
        permissions: body.permissions
          ? { roles: body.permissions.roles ?? [], users: body.permissions.users ?? [] }
          : undefined,
        tags: body.tags,
        siteId: body.siteId,
        isActive: body.isActive,
        // Whoever saves the definition vouches for it: `runAs: "author"` runs as them from now on.
        authorId: body.config ? author.userId : undefined,
      },
      author.userId,
      expectedVersions(ifMatch),
    );
    await this.forget(workflowId);
    if (!row) throw await this.missedWrite(workflowId);
    return toWorkflowResponse(row);
  }

  /** Deactivates: the definition and its run history are kept, the workflow is a 404 from now on. */
  async remove(
    ctx: RequestContext,
    workflowId: string,
    ifMatch: IfMatch = NO_PRECONDITION,
  ): Promise<WorkflowResponseDto> {
    const current = await this.requireVisible(ctx, workflowId);
    await this.sites.requireDefinitionChange(ctx, current.siteId, undefined);
    const row = await this.workflows.updateActive(
      workflowId,
      { isActive: false },
      requireUser(ctx).userId,
      expectedVersions(ifMatch),
    );
    await this.forget(workflowId);
    if (!row) throw await this.missedWrite(workflowId);
    return toWorkflowResponse(row);
  }

  /** Why a write found no row: at another version than If-Match named (412), or gone (404). */
  private async missedWrite(workflowId: string): Promise<AppError> {
    const now = await this.workflows.findById(workflowId);
    return now?.isActive ? preconditionFailed(now.version) : new AppError('WORKFLOW_NOT_FOUND');
  }

  /** The definition of a run already started (checked then): it finishes even if deactivated since. */
  async findForRun(workflowId: string): Promise<WorkflowRow> {
    const row = await this.rowOf(workflowId);
    if (!row) throw new AppError('WORKFLOW_NOT_FOUND');
    return row;
  }

  /** The active workflows an event of one of these types may trigger (checked again when run). */
  triggeredBy(events: string[]): Promise<WorkflowRow[]> {
    return this.workflows.activeTriggeredBy(events);
  }

  /** An active workflow on the caller's site, or a 404. */
  async requireVisible(ctx: RequestContext, workflowId: string): Promise<WorkflowRow> {
    const row = await this.rowOf(workflowId);
    if (!row || !row.isActive || !isVisibleInScope(row.siteId, siteScopeOf(ctx))) {
      throw new AppError('WORKFLOW_NOT_FOUND');
    }
    return row;
  }

  /**
   * The stored definition, kept like a configuration row (every run starts with it): in process,
   * or in Redis with CACHE_ENABLED, and dropped in every instance when it is changed here. Stored
   * with ISO dates (a shared cache serializes to JSON) and revived on the way out.
   */
  private async rowOf(workflowId: string): Promise<WorkflowRow | null> {
    if (!isUuid(workflowId)) return null;
    const cached = await this.cache.getOrLoad(WorkflowsService.key(workflowId), CACHE_TTL.config, () =>
      this.workflows.findById(workflowId),
    );
    if (!cached) return null;
    return { ...cached, createdAt: new Date(cached.createdAt), updatedAt: new Date(cached.updatedAt) };
  }

  private forget(workflowId: string): Promise<void> {
    return this.cache.delete(WorkflowsService.key(workflowId));
  }

  private static key(workflowId: string): string {
    return `workflow-row:${workflowId}`;
  }

  /**
   * A workflow the caller may run: admins any visible one; others when their role is in
   * `permissions.roles` or their id in `permissions.users` (else 403; empty lists mean admins only).
   */
  async requireRunnable(ctx: RequestContext, workflowId: string): Promise<WorkflowRow> {
    const row = await this.requireVisible(ctx, workflowId);
    if (!this.mayRun(requireUser(ctx), row)) throw new AppError('FORBIDDEN');
    return row;
  }

  private mayRun(user: AuthUser, row: WorkflowRow): boolean {
    if (user.role === 'admin') return true;
    const { roles = [], users = [] } = row.permissions;
    return roles.includes(user.role) || users.includes(user.userId);
  }
}
