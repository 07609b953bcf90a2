import { ApiIdempotencyKey, IdempotentRequests } from '../idempotency/idempotent-requests';
import {
  Body,
  Controller,
  Delete,
  Get,
  Headers,
  HttpCode,
  Param,
  Post,
  Put,
  Query,
  Req,
  Res,
} from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  ApiAcceptedResponse,
  ApiConflictResponse,
  ApiHeader,
  ApiCreatedResponse,
  ApiForbiddenResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiQuery,
  ApiTags,
  ApiTooManyRequestsResponse,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import { RequirePermission } from '../common/auth/auth-decision.decorators';
import { Ctx } from '../common/context/ctx.decorator';
import type { RequestContext } from '../common/context/request-context';
import {
  CreateWorkflowDto,
  ExecuteWorkflowDto,
  ListWorkflowsQueryDto,
  UpdateWorkflowDto,
} from './dto/workflow-definition.dto';
import {
  QueuedRunDto,
  WorkflowListDto,
  WorkflowResponseDto,
  WorkflowResultDto,
  WorkflowRunDto,
  WorkflowRunPageDto,
} from './dto/workflow-response.dto';
import { ExecuteQueryDto } from './dto/execute-query.dto';
import { RerunDto } from './dto/rerun.dto';
import { DecisionDto } from './dto/decision.dto';
import { RunHistoryQueryDto, RunListQueryDto } from './dto/run-history-query.dto';
import { RunDecisionsService } from './runs/run-decisions.service';
import { WorkflowRunner } from './engine/workflow-runner.service';
import { WorkflowRunsService } from './runs/workflow-runs.service';
import { WorkflowsService } from './definitions/workflows.service';
import {
  ApiConditionalRead,
  ApiConditionalWrite,
  ApiTaggedCreate,
  ConditionalRequests,
} from '../common/http/conditional-requests';
import { RoutedRead } from '../database/replicas/routed-read.interceptor';

@ApiTags('workflows')
@Controller('api/workflow')
export class WorkflowsController {
  constructor(
    private readonly workflows: WorkflowsService,
    private readonly runner: WorkflowRunner,
    private readonly runs: WorkflowRunsService,
    private readonly idempotent: IdempotentRequests,
    private readonly decisions: RunDecisionsService,
    private readonly conditional: ConditionalRequests,
  ) {}

  private shown(reply: FastifyReply, workflow: WorkflowResponseDto): WorkflowResponseDto {
    return this.conditional.tagged(reply, workflow.version, workflow);
  }

  @Get()
  @RequirePermission('workflows', 'read')
  @ApiOperation({ summary: 'Active workflows visible on this site that the caller may run (admins: all)' })
  @ApiOkResponse({ type: WorkflowListDto })
  list(@Ctx() ctx: RequestContext, @Query() query: ListWorkflowsQueryDto): Promise<WorkflowListDto> {
    return this.workflows.list(ctx, query);
  }

  @Get('runs')
  @RoutedRead()
  @RequirePermission('workflows', 'read')
  @ApiOperation({
    summary: 'Runs of every workflow, newest first (admins: all runs on this site; others: their own)',
    description:
      '`?status=waiting` lists the runs waiting for a decision (an approval step): see `waitingFor`.',
  })
  @ApiQuery({ name: 'page', required: false, example: 1 })
  @ApiQuery({ name: 'limit', required: false, example: 20 })
  @ApiOkResponse({ type: WorkflowRunPageDto })
  listRuns(@Ctx() ctx: RequestContext, @Query() query: RunListQueryDto): Promise<WorkflowRunPageDto> {
    return this.runs.list(ctx, query);
  }

  @Post('runs/:runId/steps/:stepName/decision')
  @HttpCode(200)
  @RequirePermission('workflows', 'read')
  @ApiOperation({
    summary: 'Decide on a run waiting at an approval step: approve or reject; the run resumes',
    description:
      'By a user the step names (`approvers.roles`, `approvers.users`) or an admin; the run’s own starter ' +
      'only when named in `approvers.users` or when the step sets `allowSelfApproval` (else 403 ' +
      'WORKFLOW_SELF_APPROVAL_FORBIDDEN). The decision, who decided, on whose run and when become the ' +
      'step’s result (`{approved, decidedBy, startedBy, decidedAt, comment}`); a rejection fails the step ' +
      '(its `onError` applies). The run is queued at once and goes on in the background: the answer is the ' +
      'run after the decision (`queued`).',
  })
  @ApiOkResponse({ type: WorkflowRunDto })
  @ApiNotFoundResponse({ description: 'No such run on the caller’s site' })
  @ApiConflictResponse({
    description:
      'WORKFLOW_RUN_NOT_WAITING (not waiting at this step); WORKFLOW_APPROVAL_DECIDED (decided already)',
  })
  decide(
    @Ctx() ctx: RequestContext,
    @Param('runId') runId: string,
    @Param('stepName') stepName: string,
    @Body() body: DecisionDto,
  ): Promise<WorkflowRunDto> {
    return this.decisions.decide(ctx, runId, stepName, body);
  }

  @Get('runs/:runId')
  @RequirePermission('workflows', 'read')
  @ApiOperation({ summary: 'One run with its step log (admins, and the user who started it)' })
  @ApiOkResponse({ type: WorkflowRunDto })
  @ApiNotFoundResponse({ description: 'No such run visible to the caller' })
  run(@Ctx() ctx: RequestContext, @Param('runId') runId: string): Promise<WorkflowRunDto> {
    return this.runs.get(ctx, runId);
  }

  @Get(':workflowId')
  @RequirePermission('workflows', 'read')
  @ApiOperation({ summary: 'One workflow' })
  @ApiOkResponse({ type: WorkflowResponseDto })
  @ApiConditionalRead()
  @ApiNotFoundResponse({ description: 'No active workflow with this id on this site' })
  async get(
    @Ctx() ctx: RequestContext,
    @Param('workflowId') workflowId: string,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<WorkflowResponseDto | undefined> {
    const workflow = await this.workflows.get(ctx, workflowId);
    return this.conditional.notModified(request, reply, workflow.version) ? undefined : workflow;
  }

  @Get(':workflowId/runs')
  @RoutedRead()
  @RequirePermission('workflows', 'read')
  @ApiOperation({ summary: "A workflow's runs, newest first (admins: all runs; others: their own)" })
  @ApiQuery({ name: 'page', required: false, example: 1 })
  @ApiQuery({ name: 'limit', required: false, example: 20 })
  @ApiOkResponse({ type: WorkflowRunPageDto })
  history(
    @Ctx() ctx: RequestContext,
    @Param('workflowId') workflowId: string,
    @Query() query: RunHistoryQueryDto,
  ): Promise<WorkflowRunPageDto> {
    return this.runs.history(ctx, workflowId, query);
  }

  @Post()
  @RequirePermission('workflows', 'create')
  @ApiOperation({ summary: 'Create a workflow (admin, or a role granted workflows:create)' })
  @ApiCreatedResponse({ type: WorkflowResponseDto })
  @ApiUnprocessableEntityResponse({
    description:
      'Invalid body; an unknown step type, a bad step config, template or condition names the step',
  })
  @ApiTaggedCreate()
  async create(
    @Ctx() ctx: RequestContext,
    @Body() body: CreateWorkflowDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<WorkflowResponseDto> {
    return this.shown(reply, await this.workflows.create(ctx, body));
  }

  @Put(':workflowId')
  @RequirePermission('workflows', 'update')
  @ApiOperation({
    summary: 'Update a workflow; omitted fields keep their value',
    description: 'Every update is a new `version` (runs keep the one they started with).',
  })
  @ApiOkResponse({ type: WorkflowResponseDto })
  @ApiConditionalWrite()
  async update(
    @Ctx() ctx: RequestContext,
    @Param('workflowId') workflowId: string,
    @Body() body: UpdateWorkflowDto,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<WorkflowResponseDto> {
    const ifMatch = this.conditional.ifMatch(request);
    return this.shown(reply, await this.workflows.update(ctx, workflowId, body, ifMatch));
  }

  @Delete(':workflowId')
  @RequirePermission('workflows', 'delete')
  @ApiOperation({ summary: 'Delete (deactivate) a workflow; its run history is kept' })
  @ApiOkResponse({ type: WorkflowResponseDto })
  @ApiConditionalWrite()
  async remove(
    @Ctx() ctx: RequestContext,
    @Param('workflowId') workflowId: string,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<WorkflowResponseDto> {
    const ifMatch = this.conditional.ifMatch(request);
    return this.shown(reply, await this.workflows.remove(ctx, workflowId, ifMatch));
  }

  @Post(':workflowId/execute')
  @HttpCode(200)
  @ApiIdempotencyKey()
  @RequirePermission('workflows', 'execute')
  @ApiOperation({
    summary:
      'Run a workflow on `{configId, data}`; 200 with the result object whether the run succeeded or not',
    description:
      'Needs the role in `permissions.roles` (or the user in `permissions.users`, admins always) and the form ' +
      'permission `executeWorkflows` on the configuration. Steps run with the caller’s rights. With ' +
      '`Prefer: respond-async` the run is queued: 202 `{runId, status: "queued"}` and `Location: /api/workflow/runs/:runId`. ' +
      'With `?dryRun=true` validate, transform and conditional run and every other step is only rendered: nothing is stored, mailed or sent.',
  })
  @ApiHeader({ name: 'Prefer', required: false, description: '`respond-async` queues the run (RFC 7240)' })
  @ApiOkResponse({ type: WorkflowResultDto })
  @ApiAcceptedResponse({ type: QueuedRunDto, description: 'Queued (Prefer: respond-async)' })
  @ApiTooManyRequestsResponse({
    description: 'WORKFLOW_QUEUE_FULL: the caller has WORKFLOW_MAX_QUEUED_PER_USER runs queued or running',
  })
  @ApiForbiddenResponse({
    description: 'Not allowed to run this workflow or to execute workflows on the form',
  })
  @ApiNotFoundResponse({ description: 'No such workflow or configuration visible to the caller' })
  async execute(
    @Ctx() ctx: RequestContext,
    @Param('workflowId') workflowId: string,
    @Body() body: ExecuteWorkflowDto,
    @Query() query: ExecuteQueryDto,
    @Headers('prefer') prefer: string | undefined,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<WorkflowResultDto | QueuedRunDto> {
    return this.idempotent.answer(request, reply, async () => {
      if (query.dryRun === 'true') return this.runner.dryRun(ctx, workflowId, body);
      if (prefersAsync(prefer)) {
        const queued = await this.runner.enqueue(ctx, workflowId, body);
        reply.status(202).header('location', `/api/workflow/runs/${queued.runId}`);
        return queued;
      }
      return this.runner.execute(ctx, workflowId, body);
    });
  }

  @Post('runs/:runId/rerun')
  @HttpCode(200)
  @RequirePermission('workflows', 'execute')
  @ApiOperation({
    summary:
      'Re-run a finished run as a new run (`rerunOf`), from the start, its failed step or a named step',
    description:
      'The same input, checked as executing is (the caller must be allowed to run the workflow and execute ' +
      'workflows on the form). The steps before `from` are taken over from the run: their results and what ' +
      'they provided (`savedData`), never run again, so no save or mail before that point is repeated. ' +
      '200 with the result as execute answers it, or 202 `{runId, status: "queued"}` with `Prefer: respond-async`.',
  })
  @ApiHeader({ name: 'Prefer', required: false, description: '`respond-async` queues the re-run' })
  @ApiIdempotencyKey()
  @ApiOkResponse({ type: WorkflowResultDto })
  @ApiAcceptedResponse({ type: QueuedRunDto, description: 'Queued (Prefer: respond-async)' })
  @ApiTooManyRequestsResponse({
    description: 'WORKFLOW_QUEUE_FULL: the caller has WORKFLOW_MAX_QUEUED_PER_USER runs queued or running',
  })
  @ApiNotFoundResponse({ description: 'No such run visible to the caller' })
  @ApiConflictResponse({
    description:
      'WORKFLOW_RUN_NOT_FINISHED (queued, running or waiting); WORKFLOW_RERUN_NO_FAILED_STEP (`from: "failed"`)',
  })
  @ApiUnprocessableEntityResponse({
    description:
      'WORKFLOW_RERUN_STEP_UNKNOWN, WORKFLOW_RERUN_STEP_NOT_REUSABLE (a step before the point did not run or was ' +
      'rolled back), WORKFLOW_DEFINITION_NOT_KEPT (a run older than definition versions, `definition: "original"`)',
  })
  async rerun(
    @Ctx() ctx: RequestContext,
    @Param('runId') runId: string,
    @Body() body: RerunDto,
    @Headers('prefer') prefer: string | undefined,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<WorkflowResultDto | QueuedRunDto> {
    // A client's retry with the same Idempotency-Key gets the first answer, not a second re-run.
    return this.idempotent.answer(request, reply, async () => {
      const async = prefersAsync(prefer);
      const answer = await this.runner.rerun(
        ctx,
        runId,
        { from: body.from, definition: body.definition ?? 'original' },
        async,
      );
      if (async && 'runId' in answer)
        reply.status(202).header('location', `/api/workflow/runs/${answer.runId}`);
      return answer;
    });
  }

  @Post('runs/:runId/cancel')
  @HttpCode(200)
  @RequirePermission('workflows', 'execute')
  @ApiOperation({
    summary:
      'Cancel a run: a queued run never starts, a running one stops before its next step or retry, a waiting one ends',
  })
  @ApiOkResponse({ type: WorkflowRunDto })
  @ApiNotFoundResponse({ description: 'No such run visible to the caller' })
  @ApiConflictResponse({ description: 'The run has already finished' })
  cancel(@Ctx() ctx: RequestContext, @Param('runId') runId: string): Promise<WorkflowRunDto> {
    return this.runs.cancel(ctx, runId);
  }
}

/** RFC 7240: `Prefer: respond-async` (among other preferences, any case). */
function prefersAsync(prefer: string | undefined): boolean {
  return (prefer ?? '')
    .split(',')
    .some((preference) => preference.trim().split(/[;=]/)[0].trim().toLowerCase() === 'respond-async');
}
