import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { Ctx } from '../../common/context/ctx.decorator';
import type { RequestContext } from '../../common/context/request-context';
import { FormPermission } from '../../permissions/form-permission.decorator';
import { RecordHistoryPageDto } from './record-history.dto';
import { HISTORY_MAX_LIMIT, RecordHistoryService } from './record-history.service';
import { RoutedRead } from '../../database/replicas/routed-read.interceptor';

@ApiTags('data')
@Controller('api/data')
export class RecordHistoryController {
  constructor(private readonly history: RecordHistoryService) {}

  @Get(':configId/:dataId/history')
  @RoutedRead()
  @FormPermission('viewOwnResults')
  @ApiOperation({
    summary: "A record's history: every create, update, delete and restore, newest first",
    description:
      'Who, when, through which route or workflow run, and the per-field diff of `data`. Visible to whoever may ' +
      'read the record; a record in the trash to whoever may list the trash (its owner when the form allows ' +
      'deletion, admins); once the record is purged from the trash, to admins only.',
  })
  @ApiQuery({ name: 'page', required: false, type: Number, example: 1 })
  @ApiQuery({
    name: 'limit',
    required: false,
    type: Number,
    example: 20,
    description: `1..${HISTORY_MAX_LIMIT}, 20 by default`,
  })
  @ApiOkResponse({ type: RecordHistoryPageDto })
  @ApiNotFoundResponse({ description: 'No such record (or history) visible to the caller' })
  list(
    @Ctx() ctx: RequestContext,
    @Param('configId') configId: string,
    @Param('dataId') dataId: string,
    @Query() query: Record<string, unknown>,
  ): Promise<RecordHistoryPageDto> {
    return this.history.list(ctx, configId, dataId, query);
  }
}
