import { Body, Controller, Delete, HttpCode, Param, Put, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiBody, ApiConsumes, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiConditionalWrite, ConditionalRequests } from '../../common/http/conditional-requests';
import { Ctx } from '../../common/context/ctx.decorator';
import type { RequestContext } from '../../common/context/request-context';
import { FormPermission } from '../../permissions/form-permission.decorator';
import { RecordDto, SavedRecordDto } from '../dto/record.dto';
import { FORM, STORE_KEY, STORE_VALUES, storeForm } from '../record-bodies';
import { storeValuesToFields } from '../record-changes';
import { RecordsService } from '../records.service';

/**
 * The grid library's store editing (docs/grid-protocol.md section 16): update and remove by a form
 * body naming the record, on the form's own path; inserts go through the create route.
 */
@ApiTags('data')
@Controller('api/data')
export class GridStoreController {
  constructor(
    private readonly records: RecordsService,
    private readonly conditional: ConditionalRequests,
  ) {}

  @Put(':configId')
  @FormPermission('editOwnResults')
  @ApiOperation({
    summary: 'Grid-library store update: form `key=<id>&values=<JSON of the changed fields>`',
    description:
      'docs/grid-protocol.md section 16. The changed fields (keys `data.<field>` unwrapped) are merged into the stored ' +
      '`data` current when it is written (concurrent edits of other fields are kept), then saved with the rules of ' +
      "PUT /api/data/:configId/:dataId. If-Match (sent from the store's onBeforeSend) makes it conditional. A JSON body is a 415.",
  })
  @ApiConsumes(FORM)
  @ApiBody({
    schema: {
      type: 'object',
      required: ['key', 'values'],
      properties: { key: STORE_KEY, values: STORE_VALUES },
    },
  })
  @ApiOkResponse({ type: SavedRecordDto })
  @ApiConditionalWrite()
  async storeUpdate(
    @Ctx() ctx: RequestContext,
    @Param('configId') configId: string,
    @Body() body: unknown,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<SavedRecordDto> {
    // The form hook lets a PUT form through only with both key and values.
    const form = storeForm(body);
    const ifMatch = this.conditional.ifMatch(request);
    const values = storeValuesToFields(form.values ?? {});
    const saved = await this.records.patch(ctx, configId, form.key, values, ifMatch);
    return this.conditional.tagged(reply, saved.data.version, saved);
  }

  @Delete(':configId')
  @HttpCode(200)
  @FormPermission('deleteOwnResults')
  @ApiOperation({
    summary:
      'Grid-library store remove: form `key=<id>`; soft delete with the rules of DELETE /api/data/:configId/:dataId',
  })
  @ApiConsumes(FORM)
  @ApiBody({ schema: { type: 'object', required: ['key'], properties: { key: STORE_KEY } } })
  @ApiOkResponse({ type: RecordDto })
  @ApiConditionalWrite()
  async storeRemove(
    @Ctx() ctx: RequestContext,
    @Param('configId') configId: string,
    @Body() body: unknown,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<RecordDto> {
    const key = storeForm(body).key;
    const removed = await this.records.remove(ctx, configId, key, this.conditional.ifMatch(request));
    return this.conditional.tagged(reply, removed.version, removed);
  }
}
