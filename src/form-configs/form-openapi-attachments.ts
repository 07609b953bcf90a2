import { attachmentFieldsOf } from '../validation/attachment-fields';

type Json = Record<string, unknown>;

const UUID = { type: 'string', format: 'uuid' };

/** What an upload answers, and a record shows of each of its files (README "Attachments"). */
export const ATTACHMENT_SCHEMA: Json = {
  type: 'object',
  required: ['attachmentId', 'field', 'filename', 'mediaType', 'size', 'sha256'],
  properties: {
    attachmentId: UUID,
    field: { type: 'string' },
    filename: { type: 'string' },
    mediaType: { type: 'string' },
    size: { type: 'integer' },
    sha256: { type: 'string' },
    url: { type: 'string', description: 'The download route (in a record only)' },
  },
};

/**
 * The attachment routes of a form with attachment fields, for its own OpenAPI document: the upload
 * (its `field` an enum of the form's attachment fields) and the download; none without such fields.
 */
export function attachmentPaths(
  schema: Json | null,
  parameters: { configId: Json; dataId: Json },
  errors: Json,
): Json {
  const fields = attachmentFieldsOf(schema);
  if (fields.length === 0) return {};
  const binary = { schema: { type: 'string', format: 'binary' } };
  return {
    '/api/data/{configId}/attachments': {
      parameters: [parameters.configId],
      post: {
        operationId: 'uploadAttachment',
        summary: 'Upload one file (the raw body, streamed); put the answered attachmentId in the field',
        parameters: [
          {
            name: 'field',
            in: 'query',
            required: fields.length > 1,
            schema: { enum: fields.map((field) => field.name) },
          },
          { name: 'filename', in: 'query', schema: { type: 'string' } },
        ],
        requestBody: { required: true, content: { 'application/octet-stream': binary } },
        responses: {
          201: {
            description: 'The stored upload',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Attachment' } } },
          },
          ...errors,
        },
      },
    },
    '/api/data/{configId}/{dataId}/attachments/{attachmentId}': {
      parameters: [
        parameters.configId,
        parameters.dataId,
        { name: 'attachmentId', in: 'path', required: true, schema: UUID },
      ],
      get: {
        operationId: 'downloadAttachment',
        summary: 'A file of the record, streamed (Range supported)',
        parameters: [{ name: 'Range', in: 'header', schema: { type: 'string' } }],
        responses: {
          200: { description: 'The file', content: { '*/*': binary } },
          206: { description: 'The requested byte range', content: { '*/*': binary } },
          ...errors,
        },
      },
    },
  };
}
