import { IdempotencyInterceptor } from '../idempotency/idempotency.interceptor';
import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Post,
  Put,
  Query,
  UseInterceptors,
} from '@nestjs/common';
import {
  ApiHeader,
  ApiBadRequestResponse,
  ApiBody,
  ApiCreatedResponse,
  ApiExtraModels,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiQuery,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import { FormPermission } from '../permissions/form-permission.decorator';
import { Ctx } from '../common/context/ctx.decorator';
import type { RequestContext } from '../common/context/request-context';
import { GridGroupDto, GridPageDto, RecordDto, RecordPageDto, SavedRecordDto } from './dto/record.dto';
import { RecordListService } from './record-list.service';
import { RecordsService } from './records.service';

const SUBMISSION_EXAMPLE = { name: 'Jane Doe', email: 'jane@example.com', qty: 3, price: 9.5 };

@ApiTags('data')
@ApiExtraModels(RecordPageDto, GridPageDto, GridGroupDto, RecordDto)
@Controller('api/data')
export class RecordsController {
  constructor(
    private readonly records: RecordsService,
    private readonly lists: RecordListService,
  ) {}

  @Get(':configId')
  @FormPermission('viewOwnResults')
  @ApiOperation({
    summary:
      'List active records: the paging form, or the grid-library form (skip, take, filter, sort, group, ...)',
    description:
      'Paging form: `page`, `limit` (1..1000), `sortBy` (createdAt, updatedAt, userId or a data field), `sortOrder`, ' +
      '`filters` as JSON (`{"city":"Paris"}`) or `filters[city]=Paris`; answers `{data, total, page, pages}`. ' +
      'Any of skip/take/filter/sort/group/totalSummary/groupSummary/requireTotalCount/requireGroupCount selects the grid form ' +
      '(GRID-PROTOCOL.md), answering `{data, totalCount?, groupCount?, summary?}`. Users holding only viewOwnResults see their own records.',
  })
  @ApiQuery({ name: 'page', required: false, example: 1 })
  @ApiQuery({ name: 'limit', required: false, example: 20 })
  @ApiQuery({ name: 'sortBy', required: false, example: 'createdAt' })
  @ApiQuery({ name: 'sortOrder', required: false, enum: ['asc', 'desc'] })
  @ApiQuery({ name: 'filters', required: false, example: '{"city":"Paris"}' })
  @ApiQuery({ name: 'filter', required: false, example: '["data.age",">=",18]' })
  @ApiQuery({ name: 'sort', required: false, example: '[{"selector":"data.age","desc":true}]' })
  @ApiQuery({ name: 'group', required: false, example: '[{"selector":"data.city"}]' })
  @ApiQuery({ name: 'skip', required: false, example: 0 })
  @ApiQuery({ name: 'take', required: false, example: 20 })
  @ApiQuery({ name: 'requireTotalCount', required: false, example: true })
  @ApiQuery({
    name: 'totalSummary',
    required: false,
    example: '[{"selector":"data.qty","summaryType":"sum"}]',
  })
  @ApiOkResponse({
    schema: { oneOf: [{ $ref: getSchemaPath(RecordPageDto) }, { $ref: getSchemaPath(GridPageDto) }] },
  })
  list(
    @Ctx() ctx: RequestContext,
    @Param('configId') configId: string,
    @Query() query: Record<string, unknown>,
  ): Promise<RecordPageDto | GridPageDto> {
    return this.lists.list(ctx, configId, query);
  }

  @Get(':configId/:dataId')
  @FormPermission('viewOwnResults')
  @ApiOperation({ summary: 'One active record (with its workflow log)' })
  @ApiOkResponse({ type: RecordDto })
  @ApiNotFoundResponse({ description: 'No such active record visible to the caller' })
  get(
    @Ctx() ctx: RequestContext,
    @Param('configId') configId: string,
    @Param('dataId') dataId: string,
  ): Promise<RecordDto> {
    return this.records.get(ctx, configId, dataId);
  }

  @Post(':configId')
  @FormPermission('createResults')
  @UseInterceptors(IdempotencyInterceptor)
  @ApiHeader({
    name: 'Idempotency-Key',
    required: false,
    description: 'Repeats answer the first response (24 h)',
  })
  @ApiOperation({
    summary: 'Submit a record: validated, save limit enforced, computed results stored when enabled',
  })
  @ApiQuery({
    name: 'locale',
    required: false,
    enum: ['en', 'hu'],
    description: 'Language of validation messages (default en)',
  })
  @ApiBody({ schema: { type: 'object', additionalProperties: true, example: SUBMISSION_EXAMPLE } })
  @ApiCreatedResponse({ type: SavedRecordDto })
  @ApiBadRequestResponse({
    description: 'DATA_VALIDATION_FAILED with validationErrors, or DATA_SAVE_LIMIT_REACHED',
  })
  create(
    @Ctx() ctx: RequestContext,
    @Param('configId') configId: string,
    @Body() body: unknown,
  ): Promise<SavedRecordDto> {
    return this.records.create(ctx, configId, body);
  }

  @Put(':configId/:dataId')
  @FormPermission('editOwnResults')
  @ApiOperation({
    summary: "Replace a record's data (owner when the form allows edits, or admin); re-validated",
  })
  @ApiBody({ schema: { type: 'object', additionalProperties: true, example: SUBMISSION_EXAMPLE } })
  @ApiOkResponse({ type: SavedRecordDto })
  update(
    @Ctx() ctx: RequestContext,
    @Param('configId') configId: string,
    @Param('dataId') dataId: string,
    @Body() body: unknown,
  ): Promise<SavedRecordDto> {
    return this.records.update(ctx, configId, dataId, body);
  }

  @Delete(':configId/:dataId')
  @HttpCode(200)
  @FormPermission('deleteOwnResults')
  @ApiOperation({
    summary: 'Soft-delete a record (owner when the form allows deletion, or admin); returns it',
  })
  @ApiOkResponse({ type: RecordDto })
  remove(
    @Ctx() ctx: RequestContext,
    @Param('configId') configId: string,
    @Param('dataId') dataId: string,
  ): Promise<RecordDto> {
    return this.records.remove(ctx, configId, dataId);
  }
}
