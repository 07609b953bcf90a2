import { Controller, HttpCode, Param, Post, Req, Res } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Ctx } from '../common/context/ctx.decorator';
import type { RequestContext } from '../common/context/request-context';
import { ApiConditionalWrite, ConditionalRequests } from '../common/http/conditional-requests';
import { FormPermission } from '../permissions/form-permission.decorator';
import { SavedRecordDto } from './dto/record.dto';
import { RecordDraftsService } from './record-drafts.service';

/**
 * The submit of a draft (README "Drafts"). Saving one is `POST /api/data/:configId?status=draft`,
 * changing it the record routes (RecordsController), which keep it a draft.
 */
@ApiTags('data')
@Controller('api/data')
export class RecordDraftsController {
  constructor(
    private readonly drafts: RecordDraftsService,
    private readonly conditional: ConditionalRequests,
  ) {}

  @Post(':configId/:dataId/submit')
  @HttpCode(200)
  @FormPermission('createResults')
  @ApiOperation({
    summary: 'Submit a draft: checked as a create is; on success a submitted record',
    description:
      'The draft is validated as `POST /api/data/:configId` validates a body (schema with its required fields, ' +
      "validation rules, computed values) and the owner's save limit is counted then. On success it becomes a " +
      'submitted record (its `createdAt` is now; event `record.created`, history entry `submitted`, workflows ' +
      'triggered by created records). Refused, it stays a draft, unchanged: 422 DRAFT_INCOMPLETE with ' +
      '`validationErrors` and `fieldResults`. Its owner (holding createResults) or an admin; no body.',
  })
  @ApiOkResponse({ type: SavedRecordDto })
  @ApiConditionalWrite()
  @ApiUnprocessableEntityResponse({
    description: 'DRAFT_INCOMPLETE: the draft does not pass the checks; validationErrors lists why',
  })
  @ApiBadRequestResponse({ description: 'DATA_SAVE_LIMIT_REACHED' })
  @ApiNotFoundResponse({ description: 'No such draft visible to the caller' })
  @ApiConflictResponse({ description: 'RECORD_NOT_DRAFT: the record is submitted already' })
  async submit(
    @Ctx() ctx: RequestContext,
    @Param('configId') configId: string,
    @Param('dataId') dataId: string,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<SavedRecordDto> {
    const ifMatch = this.conditional.ifMatch(request);
    const saved = await this.drafts.submit(ctx, configId, dataId, ifMatch);
    return this.conditional.tagged(reply, saved.data.version, saved);
  }
}
