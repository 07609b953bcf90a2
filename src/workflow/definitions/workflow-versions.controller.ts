import { Controller, Get, Param } from '@nestjs/common';
import { ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { RequirePermission } from '../../common/auth/auth-decision.decorators';
import { Ctx } from '../../common/context/ctx.decorator';
import type { RequestContext } from '../../common/context/request-context';
import { WorkflowVersionDto, WorkflowVersionListDto } from '../dto/workflow-version.dto';
import { WorkflowsService } from './workflows.service';

/** The kept versions of a workflow definition (every create, update and delete makes one). */
@ApiTags('workflows')
@Controller('api/workflow')
export class WorkflowVersionsController {
  constructor(private readonly workflows: WorkflowsService) {}

  @Get(':workflowId/versions')
  @RequirePermission('workflows', 'read')
  @ApiOperation({
    summary: "A workflow's versions, newest first: number, who made it, when, and which parts changed",
  })
  @ApiOkResponse({ type: WorkflowVersionListDto })
  @ApiNotFoundResponse({
    description: 'No active workflow with this id on this site that the caller may read',
  })
  versions(
    @Ctx() ctx: RequestContext,
    @Param('workflowId') workflowId: string,
  ): Promise<WorkflowVersionListDto> {
    return this.workflows.versions(ctx, workflowId);
  }

  @Get(':workflowId/versions/:version')
  @RequirePermission('workflows', 'read')
  @ApiOperation({ summary: 'One version of a workflow: the definition as it was saved' })
  @ApiParam({ name: 'version', type: 'integer', example: 1 })
  @ApiOkResponse({ type: WorkflowVersionDto })
  @ApiNotFoundResponse({
    description:
      'No such workflow (`WORKFLOW_NOT_FOUND`), or no kept version with this number (`WORKFLOW_VERSION_NOT_FOUND`)',
  })
  version(
    @Ctx() ctx: RequestContext,
    @Param('workflowId') workflowId: string,
    @Param('version') version: string,
  ): Promise<WorkflowVersionDto> {
    return this.workflows.version(ctx, workflowId, version);
  }
}
