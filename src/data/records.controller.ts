import { ApiIdempotencyKey, IdempotentRequests } from '../idempotency/idempotent-requests';
import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Patch,
  Post,
  Put,
  Query,
  Req,
  Res,
} from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  ApiBadRequestResponse,
  ApiBody,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiExtraModels,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiQuery,
  ApiResponse,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import {
  ApiConditionalRead,
  ApiConditionalWrite,
  ApiTaggedCreate,
  ConditionalRequests,
} from '../common/http/conditional-requests';
import { isMultipart } from '../common/http/multipart-body';
import { ApiFormBody, ApiMultipartBody } from '../common/http/openapi-document';
import { FormPermission } from '../permissions/form-permission.decorator';
import { Ctx } from '../common/context/ctx.decorator';
import type { RequestContext } from '../common/context/request-context';
import { GridGroupDto, GridPageDto, RecordDto, RecordPageDto, SavedRecordDto } from './dto/record.dto';
import { RecordListService } from './record-list.service';
import { RecordDraftsService } from './record-drafts.service';
import { parseStatusFilter } from './list-query.parser';
import { STATUS_QUERY } from './dto/status-query';
import { RecordsService } from './records.service';
import { RoutedRead } from '../database/replicas/routed-read.interceptor';
import { RecordWithFiles } from './record-with-files.service';
import { RECORD_WITH_FILES, STORE_VALUES, SUBMISSION_EXAMPLE, submittedFields } from './record-bodies';

@ApiTags('data')
@ApiExtraModels(RecordPageDto, GridPageDto, GridGroupDto, RecordDto)
@Controller('api/data')
export class RecordsController {
  constructor(
    private readonly records: RecordsService,
    private readonly lists: RecordListService,
    private readonly drafts: RecordDraftsService,
    private readonly withFiles: RecordWithFiles,
    private readonly idempotent: IdempotentRequests,
    private readonly conditional: ConditionalRequests,
  ) {}

  /** The answer of a write to one record, with the ETag of the version it shows. */
  private saved(reply: FastifyReply, saved: SavedRecordDto): SavedRecordDto {
    return this.conditional.tagged(reply, saved.data.version, saved);
  }

  private shown(reply: FastifyReply, record: RecordDto): RecordDto {
    return this.conditional.tagged(reply, record.version, record);
  }

  @Get(':configId')
  @RoutedRead()
  @FormPermission('viewOwnResults')
  @ApiOperation({
    summary:
      'List active records: the paging form, or the grid-library form (skip, take, filter, sort, group, ...)',
    description:
      'Paging form: `page`, `limit` (1..LIST_MAX_ROWS, 1000 by default), `sortBy` (createdAt, updatedAt, userId or a data field), `sortOrder`, ' +
      '`filters` as JSON (`{"city":"Paris"}`) or `filters[city]=Paris`; answers `{data, total, page, pages}`. ' +
      'Any of skip/take/filter/sort/group/totalSummary/groupSummary/requireTotalCount/requireGroupCount selects the grid form ' +
      '(docs/grid-protocol.md), answering `{data, totalCount?, groupCount?, summary?}`; `take` at most LIST_MAX_ROWS. ' +
      'An answer over LIST_MAX_ROWS records or LIST_MAX_BYTES of record data is a 422 LIST_TOO_LARGE. ' +
      'Users holding only viewOwnResults see their own records. ' +
      '`deleted=true` lists the trash instead (either form): records deleted less than RECORD_TRASH_DAYS ago, ' +
      'restorable with POST /api/data/:configId/:dataId/restore; admins see all of them, an owner holding ' +
      'deleteOwnResults on a form allowing deletion their own, anyone else gets a 403. ' +
      "`status=draft` lists drafts instead (either form): the caller's own, an admin's everyone's.",
  })
  @ApiQuery(STATUS_QUERY)
  @ApiQuery({
    name: 'deleted',
    required: false,
    type: Boolean,
    example: true,
    description: 'true: the trash instead of the active records',
  })
  @ApiQuery({ name: 'page', required: false, type: Number, example: 1 })
  @ApiQuery({ name: 'limit', required: false, type: Number, example: 20 })
  @ApiQuery({ name: 'sortBy', required: false, type: String, example: 'createdAt' })
  @ApiQuery({ name: 'sortOrder', required: false, enum: ['asc', 'desc'] })
  @ApiQuery({ name: 'filters', required: false, type: String, example: '{"city":"Paris"}' })
  @ApiQuery({ name: 'filter', required: false, type: String, example: '["data.age",">=",18]' })
  @ApiQuery({
    name: 'configVersion',
    required: false,
    type: Number,
    example: 2,
    description: 'Only records last validated against this version of the form (both forms)',
  })
  @ApiQuery({ name: 'sort', required: false, type: String, example: '[{"selector":"data.age","desc":true}]' })
  @ApiQuery({ name: 'group', required: false, type: String, example: '[{"selector":"data.city"}]' })
  @ApiQuery({ name: 'skip', required: false, type: Number, example: 0 })
  @ApiQuery({ name: 'take', required: false, type: Number, example: 20 })
  @ApiQuery({ name: 'requireTotalCount', required: false, type: Boolean, example: true })
  @ApiQuery({
    name: 'totalSummary',
    required: false,
    type: String,
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
  @ApiConditionalRead()
  @ApiNotFoundResponse({ description: 'No such active record visible to the caller' })
  async get(
    @Ctx() ctx: RequestContext,
    @Param('configId') configId: string,
    @Param('dataId') dataId: string,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<RecordDto | undefined> {
    const record = await this.records.get(ctx, configId, dataId);
    return this.conditional.notModified(request, reply, record.version) ? undefined : record;
  }

  @Post(':configId')
  @FormPermission('createResults')
  @ApiIdempotencyKey()
  @ApiOperation({
    summary: 'Submit a record: validated, save limit enforced, computed results stored when enabled',
    description:
      'With `status=draft` the body is saved as a draft instead (README "Drafts"): its types and unknown fields ' +
      'are checked, not its required fields, rules or computed values; it counts against no save limit and is ' +
      'seen by its owner and admins only, until `POST /api/data/:configId/:dataId/submit`.',
  })
  @ApiQuery({
    name: 'status',
    required: false,
    enum: ['submitted', 'draft'],
    example: 'draft',
    description: '`draft`: save as a draft; `submitted` (default): a submission',
  })
  @ApiQuery({
    name: 'locale',
    required: false,
    enum: ['en', 'hu'],
    description: 'Language of validation messages (default en)',
  })
  @ApiBody({
    description:
      "JSON: the field values. Form-encoded (the grid-library store's insert): `values=<JSON object>`, " +
      'keys `data.<field>` unwrapped to `<field>`; any other form body is a 415. Multipart: the record with its files.',
    schema: { type: 'object', additionalProperties: true, example: SUBMISSION_EXAMPLE },
  })
  @ApiFormBody({ type: 'object', required: ['values'], properties: { values: STORE_VALUES } })
  @ApiMultipartBody(RECORD_WITH_FILES)
  @ApiCreatedResponse({ type: SavedRecordDto })
  @ApiTaggedCreate()
  @ApiBadRequestResponse({
    description: 'DATA_VALIDATION_FAILED with validationErrors, or DATA_SAVE_LIMIT_REACHED',
  })
  @ApiResponse({
    status: 507,
    description: 'ATTACHMENT_STORAGE_FULL (multipart): a file the filesystem store has no room for',
  })
  async create(
    @Ctx() ctx: RequestContext,
    @Param('configId') configId: string,
    @Body() body: unknown,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<SavedRecordDto> {
    const draft = parseStatusFilter(request.query as Record<string, unknown>) === 'draft';
    const saved = isMultipart(request)
      ? await this.idempotent.answerMultipart(request, reply, (parts) =>
          this.withFiles.create(ctx, configId, parts, { draft }),
        )
      : await this.idempotent.answer(request, reply, () =>
          draft
            ? this.drafts.save(ctx, configId, submittedFields(body))
            : this.records.create(ctx, configId, submittedFields(body)),
        );
    return this.saved(reply, saved);
  }

  @Patch(':configId/:dataId')
  @FormPermission('editOwnResults')
  @ApiOperation({
    summary: "Merge fields into a record's data (owner when the form allows edits, or admin); re-validated",
    description:
      'The given fields are merged into `data`: an object merges key by key, any other value (array, scalar, ' +
      'null) replaces; new fields come after the stored ones. The result is validated and recomputed as in PUT. ' +
      'The merge is into the version current when it is written: concurrent patches of other fields are kept.',
  })
  @ApiBody({ schema: { type: 'object', additionalProperties: true, example: { qty: 4 } } })
  @ApiOkResponse({ type: SavedRecordDto })
  @ApiConditionalWrite()
  async patch(
    @Ctx() ctx: RequestContext,
    @Param('configId') configId: string,
    @Param('dataId') dataId: string,
    @Body() body: unknown,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<SavedRecordDto> {
    const ifMatch = this.conditional.ifMatch(request);
    return this.saved(reply, await this.records.patch(ctx, configId, dataId, body, ifMatch));
  }

  @Put(':configId/:dataId')
  @FormPermission('editOwnResults')
  @ApiOperation({
    summary: "Replace a record's data (owner when the form allows edits, or admin); re-validated",
    description: 'Without If-Match the last write wins (every write is in the record history).',
  })
  @ApiBody({ schema: { type: 'object', additionalProperties: true, example: SUBMISSION_EXAMPLE } })
  @ApiOkResponse({ type: SavedRecordDto })
  @ApiConditionalWrite()
  async update(
    @Ctx() ctx: RequestContext,
    @Param('configId') configId: string,
    @Param('dataId') dataId: string,
    @Body() body: unknown,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<SavedRecordDto> {
    const ifMatch = this.conditional.ifMatch(request);
    return this.saved(reply, await this.records.update(ctx, configId, dataId, body, ifMatch));
  }

  @Post(':configId/:dataId/restore')
  @HttpCode(200)
  @FormPermission('deleteOwnResults')
  @ApiOperation({
    summary: 'Restore a record from the trash (owner when the form allows deletion, or admin); returns it',
    description:
      'A deleted record stays in the trash for RECORD_TRASH_DAYS, then is purged (its history stays). ' +
      "Restoring is refused with 409 DATA_RESTORE_LIMIT_REACHED when the owner's active records already fill " +
      'the save limit; a record not in the trash (never deleted, already restored, purged) is a 404.',
  })
  @ApiOkResponse({ type: RecordDto })
  @ApiNotFoundResponse({ description: 'No such record in the trash visible to the caller' })
  @ApiConflictResponse({ description: 'DATA_RESTORE_LIMIT_REACHED' })
  @ApiConditionalWrite()
  async restore(
    @Ctx() ctx: RequestContext,
    @Param('configId') configId: string,
    @Param('dataId') dataId: string,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<RecordDto> {
    const ifMatch = this.conditional.ifMatch(request);
    return this.shown(reply, await this.records.restore(ctx, configId, dataId, ifMatch));
  }

  @Delete(':configId/:dataId')
  @HttpCode(200)
  @FormPermission('deleteOwnResults')
  @ApiOperation({
    summary: 'Soft-delete a record (owner when the form allows deletion, or admin); returns it',
    description:
      'The record goes to the trash (`deletedAt` set): listed with `deleted=true`, restorable for RECORD_TRASH_DAYS.',
  })
  @ApiOkResponse({ type: RecordDto })
  @ApiConditionalWrite()
  async remove(
    @Ctx() ctx: RequestContext,
    @Param('configId') configId: string,
    @Param('dataId') dataId: string,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<RecordDto> {
    const ifMatch = this.conditional.ifMatch(request);
    return this.shown(reply, await this.records.remove(ctx, configId, dataId, ifMatch));
  }
}
