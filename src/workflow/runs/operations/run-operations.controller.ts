import { Body, Controller, Get, HttpCode, Param, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  ApiAcceptedResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import { Roles } from '../../../common/auth/auth-decision.decorators';
import { Ctx } from '../../../common/context/ctx.decorator';
import type { RequestContext } from '../../../common/context/request-context';
import {
  BulkCancelDto,
  BulkRerunDto,
  OperationAcceptedDto,
  RunOperationDto,
} from '../../dto/run-operation.dto';
import { ApiIdempotencyKey, IdempotentRequests } from '../../../idempotency/idempotent-requests';
import { MAX_OPERATION_RUNS, RunOperationsService } from './run-operations.service';

const ACCEPTED =
  '202 `{operationId}` (and `Location: /api/workflow/operations/:id`); the runs are handled in the background: ' +
  `poll the operation. At most ${MAX_OPERATION_RUNS} runs per operation: a filter matching more is a 422 ` +
  '`WORKFLOW_OPERATION_TOO_LARGE` (narrow it by time range, status or user). Admins only.';

@ApiTags('workflows')
@Controller('api/workflow')
export class RunOperationsController {
  constructor(
    private readonly operations: RunOperationsService,
    private readonly idempotent: IdempotentRequests,
  ) {}

  @Post(':workflowId/runs/cancel')
  @HttpCode(202)
  @Roles('admin')
  @ApiIdempotencyKey()
  @ApiOperation({
    summary: "Cancel a workflow's runs matching a filter (default: queued, running and waiting ones)",
    description: `Each run as the cancel route cancels it. ${ACCEPTED}`,
  })
  @ApiAcceptedResponse({ type: OperationAcceptedDto })
  @ApiNotFoundResponse({ description: 'No such workflow on this site' })
  @ApiUnprocessableEntityResponse({ description: 'Invalid filter, or WORKFLOW_OPERATION_TOO_LARGE' })
  async cancel(
    @Ctx() ctx: RequestContext,
    @Param('workflowId') workflowId: string,
    @Body() body: BulkCancelDto,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<OperationAcceptedDto> {
    return this.accepted(request, reply, () => this.operations.start(ctx, workflowId, 'cancel', body));
  }

  @Post(':workflowId/runs/rerun')
  @HttpCode(202)
  @Roles('admin')
  @ApiIdempotencyKey()
  @ApiOperation({
    summary: "Re-run a workflow's finished runs matching a filter, each from `from` with `definition`",
    description:
      'Each run as the re-run route re-runs it, queued (`Prefer: respond-async`) as the admin, at the pace the ' +
      `admin's WORKFLOW_MAX_QUEUED_PER_USER allows. ${ACCEPTED}`,
  })
  @ApiAcceptedResponse({ type: OperationAcceptedDto })
  @ApiNotFoundResponse({ description: 'No such workflow on this site' })
  @ApiUnprocessableEntityResponse({ description: 'Invalid body, or WORKFLOW_OPERATION_TOO_LARGE' })
  async rerun(
    @Ctx() ctx: RequestContext,
    @Param('workflowId') workflowId: string,
    @Body() body: BulkRerunDto,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<OperationAcceptedDto> {
    return this.accepted(request, reply, () => this.operations.start(ctx, workflowId, 'rerun', body));
  }

  /** A client's retry with the same Idempotency-Key gets the first operation, not a second one. */
  private async accepted(
    request: FastifyRequest,
    reply: FastifyReply,
    start: () => Promise<OperationAcceptedDto>,
  ): Promise<OperationAcceptedDto> {
    const accepted = await this.idempotent.answer(request, reply, start);
    reply.header('location', `/api/workflow/operations/${accepted.operationId}`);
    return accepted;
  }

  @Get('operations/:operationId')
  @Roles('admin')
  @ApiOperation({
    summary: 'A bulk operation’s progress: matched, done, failed (with each failed run’s code)',
  })
  @ApiOkResponse({ type: RunOperationDto })
  @ApiNotFoundResponse({ description: 'No such operation' })
  get(@Ctx() ctx: RequestContext, @Param('operationId') operationId: string): Promise<RunOperationDto> {
    return this.operations.get(ctx, operationId);
  }
}
