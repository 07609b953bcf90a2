import { Controller, Get, Param, Query, Res } from '@nestjs/common';
import { STATUS_QUERY } from '../data/dto/status-query';
import { ApiOperation, ApiProduces, ApiQuery, ApiResponse, ApiTags, getSchemaPath } from '@nestjs/swagger';
import { RecordDto } from '../data/dto/record.dto';
import type { FastifyReply } from 'fastify';
import { FormPermission } from '../permissions/form-permission.decorator';
import { Ctx } from '../common/context/ctx.decorator';
import type { RequestContext } from '../common/context/request-context';
import { ExportService } from './export.service';
import { RoutedRead } from '../database/replicas/routed-read.interceptor';

@ApiTags('data')
@Controller('api/data')
export class ExportController {
  constructor(private readonly exports: ExportService) {}

  @Get(':configId/export')
  @RoutedRead()
  @FormPermission('exportResults')
  @ApiOperation({
    summary: 'Download the active records as JSON, CSV or an XLSX workbook (streamed)',
    description:
      'CSV: header `id,createdAt,<fields>` (fields = keys of the first record, or `columns`; `configVersion` after `createdAt` with ' +
      '`configVersionColumn=true`), values quoted when they contain ' +
      'comma, quote, CR or LF; objects as JSON; empty result = empty body. XLSX: sheet `Data`, bold grey header with localized ' +
      'labels, createdAt as a date (then the form version when asked), columns 20 wide. In CSV and XLSX, text starting with =, +, -, @, tab or CR gets a ' +
      "leading ' (unless EXPORT_RAW_CELLS=true), and a field named like a system column is headed data.<name>. " +
      '`filters` works as in the list, `filter` as in the grid form.',
  })
  @ApiQuery({
    name: 'format',
    required: false,
    enum: ['json', 'csv', 'excel', 'zip'],
    description: 'default json; zip: records.json and every attached file (README "Attachments")',
  })
  @ApiQuery({ name: 'filters', required: false, type: String, example: '{"city":"Paris"}' })
  @ApiQuery(STATUS_QUERY)
  @ApiQuery({ name: 'filter', required: false, type: String, example: '["data.age",">=",18]' })
  @ApiQuery({
    name: 'configVersion',
    required: false,
    type: Number,
    example: 2,
    description: 'Only records last validated against this version of the form',
  })
  @ApiQuery({
    name: 'configVersionColumn',
    required: false,
    type: Boolean,
    example: true,
    description:
      'CSV and XLSX: a configVersion column after createdAt (the form version each record was last validated against)',
  })
  @ApiQuery({
    name: 'columns',
    required: false,
    type: String,
    example: 'name,city',
    description: 'field columns of CSV and XLSX',
  })
  @ApiQuery({
    name: 'lang',
    required: false,
    enum: ['en', 'hu'],
    description: 'language of the XLSX header labels',
  })
  @ApiProduces(
    'application/json',
    'text/csv',
    'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    'application/zip',
  )
  @ApiResponse({
    status: 200,
    description: 'The file, with Content-Disposition: attachment',
    content: {
      'application/json': { schema: { type: 'array', items: { $ref: getSchemaPath(RecordDto) } } },
      'text/csv': { schema: { type: 'string' } },
      'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': {
        schema: { type: 'string', format: 'binary' },
      },
      'application/zip': { schema: { type: 'string', format: 'binary' } },
    },
  })
  async download(
    @Ctx() ctx: RequestContext,
    @Param('configId') configId: string,
    @Query() query: Record<string, unknown>,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const download = await this.exports.export(ctx, configId, query);
    await reply
      .header('content-type', download.contentType)
      .header('content-disposition', download.disposition)
      .send(download.stream);
  }
}
