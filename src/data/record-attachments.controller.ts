import { Controller, Get, Headers, Param, Res } from '@nestjs/common';
import {
  ApiHeader,
  ApiNotFoundResponse,
  ApiOperation,
  ApiProduces,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { Ctx } from '../common/context/ctx.decorator';
import type { RequestContext } from '../common/context/request-context';
import { AppError } from '../common/errors/app-error';
import { FormPermission } from '../permissions/form-permission.decorator';
import { RecordAttachments } from './record-attachments.service';

@ApiTags('attachments')
@Controller('api/data')
export class RecordAttachmentsController {
  constructor(private readonly files: RecordAttachments) {}

  @Get(':configId/:dataId/attachments/:attachmentId')
  @FormPermission('viewOwnResults')
  @ApiOperation({
    summary: 'Download a file of a record, streamed; byte ranges supported',
    description:
      'Same access as reading the record (site, owner unless viewAllResults, trash). Content-Type is the sniffed type, ' +
      'Content-Disposition names the file (RFC 6266 filename*), X-Content-Type-Options: nosniff, ETag the SHA-256. ' +
      'One `Range: bytes=a-b` (or `a-`, `-n`) answers 206 with Content-Range; a range past the end 416.',
  })
  @ApiHeader({ name: 'Range', required: false, example: 'bytes=0-1023' })
  @ApiProduces('application/octet-stream')
  @ApiResponse({
    status: 200,
    description: 'The file',
    content: { '*/*': { schema: { type: 'string', format: 'binary' } } },
  })
  @ApiResponse({ status: 206, description: 'The requested range of the file' })
  @ApiResponse({ status: 416, description: 'RANGE_NOT_SATISFIABLE, with Content-Range: bytes */<size>' })
  @ApiNotFoundResponse({ description: 'RECORD_NOT_FOUND or ATTACHMENT_NOT_FOUND' })
  async download(
    @Ctx() ctx: RequestContext,
    @Param('configId') configId: string,
    @Param('dataId') dataId: string,
    @Param('attachmentId') attachmentId: string,
    @Headers('range') range: string | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    try {
      const download = await this.files.open(ctx, configId, dataId, attachmentId, range);
      await reply.status(download.status).headers(download.headers).send(download.body);
    } catch (error) {
      if (error instanceof AppError && error.code === 'RANGE_NOT_SATISFIABLE')
        reply.header('content-range', (error.details as { contentRange: string }).contentRange);
      throw error;
    }
  }
}
