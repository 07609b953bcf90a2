import { Controller, Delete, Get, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiConflictResponse,
  ApiHeader,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Authenticated } from '../common/auth/auth-decision.decorators';
import { Ctx } from '../common/context/ctx.decorator';
import { ApiBodyContent } from '../common/http/openapi-document';
import type { RequestContext } from '../common/context/request-context';
import { FormPermission } from '../permissions/form-permission.decorator';
import { ImportDto } from './dto/import.dto';
import { importPath } from './import.mapper';
import { IMPORT_MODES } from './import-options';
import { ImportsService } from './imports.service';

const CSV_EXAMPLE = 'name,qty,price,city\nJane,3,9.5,Paris\nJohn,not a number,1,Rome';
const NDJSON_EXAMPLE = '{"name":"Jane","qty":3,"price":9.5}\n{"name":"John","qty":4}';

@ApiTags('data')
@Controller('api/data')
export class ImportsController {
  constructor(private readonly imports: ImportsService) {}

  @Post(':configId/import')
  @HttpCode(202)
  @FormPermission('importResults')
  @ApiOperation({
    summary: 'Import records from a CSV, XLSX or NDJSON file, or a JSON array (202, an operation to poll)',
    description:
      'The file is streamed (up to IMPORT_MAX_BYTES; a JSON array body up to BODY_LIMIT): `text/csv`, ' +
      '`application/vnd.openxmlformats-officedocument.spreadsheetml.sheet` (first sheet), `application/x-ndjson` ' +
      '(one object per line: the data, or a record as the JSON export writes it), `application/json` (an array of ' +
      'the same). Columns are matched to fields by header as the export writes them (so an export re-imports ' +
      'unchanged; `id`, `createdAt` are left out) or by `mapping`, and typed by the schema. Every row is checked ' +
      'as a create checks a body; the save limit does not apply. Answers 202 with the import and ' +
      '`Location: /api/data/imports/:id` once the file is read; valid rows are stored in the background. ' +
      'Needs the form permission `importResults` (admins hold it). `Idempotency-Key` answers a repeat with the ' +
      'first import (24 h).',
  })
  @ApiQuery({
    name: 'mode',
    required: false,
    enum: IMPORT_MODES,
    example: 'valid-rows',
    description:
      '`validate`: report only; `all-or-nothing`: nothing stored on any refusal; `valid-rows` (default)',
  })
  @ApiQuery({
    name: 'mapping',
    required: false,
    type: String,
    example: '{"Customer":"name","Ignored column":null}',
    description: 'JSON object: column header → field (null leaves the column out); other headers by name',
  })
  @ApiHeader({
    name: 'Idempotency-Key',
    required: false,
    description:
      'A repeat answers the first import (24 h); after a valid-rows upload that stopped past stored rows, ' +
      'the same file sent again continues that import after its last row read',
  })
  @ApiBodyContent({
    'text/csv': { schema: { type: 'string' }, example: CSV_EXAMPLE },
    'application/x-ndjson': { schema: { type: 'string' }, example: NDJSON_EXAMPLE },
    'application/json': {
      schema: { type: 'array', items: { type: 'object', additionalProperties: true } },
      example: [{ name: 'Jane', qty: 3, price: 9.5 }],
    },
  })
  @ApiAcceptedResponse({ type: ImportDto, description: 'The file is read; poll the import' })
  @ApiNotFoundResponse({ description: "CONFIG_NOT_FOUND (also another site's form)" })
  async upload(
    @Ctx() ctx: RequestContext,
    @Param('configId') configId: string,
    @Query() query: Record<string, unknown>,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<ImportDto> {
    const key = request.headers['idempotency-key'];
    const imported = await this.imports.upload(ctx, configId, {
      contentType: request.headers['content-type'],
      query,
      body: request.body,
      idempotencyKey: typeof key === 'string' ? key : undefined,
    });
    reply.header('location', importPath(imported.id));
    return imported;
  }

  @Get('imports/:importId')
  @Authenticated()
  @ApiOperation({
    summary: 'An import: rows read, stored, refused and its first 1,000 refusals',
    description: 'Its importer and admins see it; anyone else gets a 404.',
  })
  @ApiOkResponse({ type: ImportDto })
  @ApiNotFoundResponse({ description: 'IMPORT_NOT_FOUND' })
  get(@Ctx() ctx: RequestContext, @Param('importId') importId: string): Promise<ImportDto> {
    return this.imports.get(ctx, importId);
  }

  @Get('imports/:importId/refusals')
  @Authenticated()
  @ApiOperation({ summary: 'Every refusal of an import as CSV: `row,field,rule,message`' })
  @ApiProduces('text/csv')
  @ApiOkResponse({ description: 'The CSV', content: { 'text/csv': { schema: { type: 'string' } } } })
  @ApiNotFoundResponse({ description: 'IMPORT_NOT_FOUND' })
  async refusals(
    @Ctx() ctx: RequestContext,
    @Param('importId') importId: string,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const csv = await this.imports.refusalsCsv(ctx, importId);
    await reply
      .header('content-type', 'text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="import-${importId}-refusals.csv"`)
      .send(csv);
  }

  @Post('imports/:importId/cancel')
  @HttpCode(200)
  @Authenticated()
  @ApiOperation({
    summary: 'Cancel an unfinished import (rows stored before stay, in valid-rows mode)',
  })
  @ApiOkResponse({ type: ImportDto })
  @ApiNotFoundResponse({ description: 'IMPORT_NOT_FOUND' })
  @ApiConflictResponse({ description: 'IMPORT_FINISHED' })
  cancel(@Ctx() ctx: RequestContext, @Param('importId') importId: string): Promise<ImportDto> {
    return this.imports.cancel(ctx, importId);
  }

  @Delete('imports/:importId')
  @Authenticated()
  @ApiOperation({ summary: 'Cancel an unfinished import (the same as POST .../cancel)' })
  @ApiOkResponse({ type: ImportDto })
  @ApiNotFoundResponse({ description: 'IMPORT_NOT_FOUND' })
  @ApiConflictResponse({ description: 'IMPORT_FINISHED' })
  remove(@Ctx() ctx: RequestContext, @Param('importId') importId: string): Promise<ImportDto> {
    return this.imports.cancel(ctx, importId);
  }
}
