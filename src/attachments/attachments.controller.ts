import { Controller, HttpCode, Param, Post, Query, Req } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBody,
  ApiConsumes,
  ApiCreatedResponse,
  ApiHeader,
  ApiOperation,
  ApiPayloadTooLargeResponse,
  ApiQuery,
  ApiResponse,
  ApiTags,
  ApiTooManyRequestsResponse,
  ApiUnprocessableEntityResponse,
  ApiUnsupportedMediaTypeResponse,
} from '@nestjs/swagger';
import { parse as parseContentDisposition } from 'content-disposition';
import type { FastifyRequest } from 'fastify';
import { Ctx } from '../common/context/ctx.decorator';
import type { RequestContext } from '../common/context/request-context';
import { isMultipart, multipartParts } from '../common/http/multipart-body';
import { ApiMultipartBody } from '../common/http/openapi-document';
import { FormPermission } from '../permissions/form-permission.decorator';
import { AttachmentUploadsService } from './attachment-uploads.service';
import { UploadedAttachmentDto } from './dto/attachment.dto';

/** The file name of a `Content-Disposition: attachment; filename*=UTF-8''...` request header, if any. */
function dispositionFilename(header: string | undefined): string | undefined {
  if (!header) return undefined;
  try {
    return parseContentDisposition(header).parameters.filename;
  } catch {
    return undefined;
  }
}

function declaredLength(request: FastifyRequest): number | null {
  const header = request.headers['content-length'];
  return typeof header === 'string' && /^\d+$/.test(header) ? Number(header) : null;
}

@ApiTags('attachments')
@Controller('api/data')
export class AttachmentsController {
  constructor(private readonly uploads: AttachmentUploadsService) {}

  @Post(':configId/attachments')
  @HttpCode(201)
  @FormPermission('createResults')
  @ApiOperation({
    summary: 'Upload one file for an attachment field; put the answered attachmentId in a record’s field',
    description:
      'The body is the file itself, any Content-Type, or a multipart/form-data body of one file part ' +
      '(the client’s type is ignored: the type is sniffed from the ' +
      'bytes), streamed to storage while hashed; BODY_LIMIT does not apply, the field’s x-maxSize and ' +
      'ATTACHMENT_MAX_BYTES do. The same bytes uploaded twice are stored once. A refused upload stores nothing. ' +
      'An upload that no record refers to is removed after ATTACHMENT_UNLINKED_HOURS.',
  })
  @ApiQuery({
    name: 'field',
    required: false,
    type: String,
    description: 'The attachment field of the form (`photo`); may be left out when the form has only one',
  })
  @ApiQuery({
    name: 'filename',
    required: false,
    type: String,
    description:
      'The file’s name (`receipt.png`; or a Content-Disposition header with filename or filename*); only its base name is kept',
  })
  @ApiHeader({
    name: 'Content-Disposition',
    required: false,
    example: "attachment; filename*=UTF-8''re%C3%A7u.png",
  })
  @ApiConsumes('application/octet-stream', 'image/*', 'application/pdf')
  @ApiBody({ schema: { type: 'string', format: 'binary' } })
  @ApiMultipartBody({
    type: 'object',
    description:
      'One file part (a second part is a 400 MULTIPART_INVALID); its part name is the field when `field` is not given ' +
      'and it names one, its filename the file’s name. Streamed like a raw body.',
    properties: { photo: { type: 'string', format: 'binary', description: 'The file, named by its field' } },
  })
  @ApiCreatedResponse({ type: UploadedAttachmentDto })
  @ApiBadRequestResponse({
    description: 'ATTACHMENT_EMPTY, or MULTIPART_INVALID (a malformed body, not one file part)',
  })
  @ApiPayloadTooLargeResponse({ description: 'ATTACHMENT_TOO_LARGE: over x-maxSize or ATTACHMENT_MAX_BYTES' })
  @ApiUnsupportedMediaTypeResponse({
    description: 'ATTACHMENT_TYPE_NOT_ALLOWED: the sniffed type is not in x-mediaTypes',
  })
  @ApiUnprocessableEntityResponse({
    description: 'ATTACHMENT_FIELD_UNKNOWN: `field` is not an attachment field',
  })
  @ApiTooManyRequestsResponse({
    description: 'ATTACHMENT_UPLOAD_LIMIT_REACHED (ATTACHMENT_UPLOADS_PER_MINUTE)',
  })
  @ApiResponse({ status: 507, description: 'ATTACHMENT_STORAGE_FULL: the filesystem store has no room left' })
  upload(
    @Ctx() ctx: RequestContext,
    @Param('configId') configId: string,
    @Query('field') field: string | undefined,
    @Query('filename') filename: string | undefined,
    @Req() request: FastifyRequest,
  ): Promise<UploadedAttachmentDto> {
    const named = typeof field === 'string' ? field : undefined;
    if (isMultipart(request))
      return this.uploads.uploadPart(ctx, configId, named, multipartParts(request, { files: 1, fields: 0 }));
    return this.uploads.upload(ctx, configId, {
      field: named,
      filename:
        (typeof filename === 'string' ? filename : undefined) ??
        dispositionFilename(request.headers['content-disposition']),
      declaredLength: declaredLength(request),
      body: request.raw,
    });
  }
}
