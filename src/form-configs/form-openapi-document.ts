import { FREE_OBJECT } from '../common/http/openapi-schemas';
import { ATTACHMENT_SCHEMA, attachmentPaths } from './form-openapi-attachments';
import type { ConfigResponseDto } from './dto/form-config.dto';

type Json = Record<string, unknown>;

const FORM_DATA = '#/components/schemas/FormData';
const UUID = { type: 'string', format: 'uuid' };
const NULLABLE_UUID = { type: ['string', 'null'], format: 'uuid' };
const DATE_TIME = { type: 'string', format: 'date-time' };

/**
 * The stored schema under components/schemas/FormData: its own pointer references (`#`, `#/$defs/x`)
 * are rewritten to point inside it there, so they mean what they meant in the form. Its `$id` is
 * dropped (as when it is compiled), or the rewritten pointers would resolve against that id; anchor
 * references (`#name`) stay, since the anchors travel with the schema into the same document.
 */
function relocated(schema: Json): Json {
  const { $id: _id, ...withoutId } = schema;
  return relocatedRefs(withoutId) as Json;
}

function relocatedRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(relocatedRefs);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) => [
      key,
      key === '$ref' && typeof inner === 'string' && (inner === '#' || inner.startsWith('#/'))
        ? FORM_DATA + inner.slice(1)
        : relocatedRefs(inner),
    ]),
  );
}

const json = (schema: Json) => ({ content: { 'application/json': { schema } } });
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/**
 * An OpenAPI 3.1 document of one form's record routes, whose record bodies and `data` are the form's
 * own JSON Schema (2020-12, the dialect of OpenAPI 3.1): a client generated from it types a
 * submission's fields. Its version is the configuration's `updatedAt`, so it changes with the form.
 */
export function formOpenApiDocument(
  config: Pick<ConfigResponseDto, 'id' | 'title' | 'schema' | 'updatedAt' | 'version'>,
  bounds: { maxListRows: number },
): Json {
  const configId = {
    name: 'configId',
    in: 'path',
    required: true,
    schema: { type: 'string', const: config.id },
  };
  const dataId = { name: 'dataId', in: 'path', required: true, schema: UUID };
  const errors = { default: { description: 'An error (the status says which kind)', ...json(ref('Error')) } };
  const saved = { description: 'The saved record', ...json(ref('SavedRecord')) };
  const record = { description: 'The record', ...json(ref('Record')) };
  const submission = { required: true, ...json(ref('FormData')) };
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: `${config.title}: records`,
      version: config.updatedAt,
      'x-config-version': config.version,
      description:
        `The record routes of the form "${config.title}" (${config.id}) at its version ${config.version}; ` +
        '`FormData` is its JSON Schema as stored. A submission is validated against the current version. ' +
        'The whole API, with the grid-library list form, export, statistics and drafts (records saved before they ' +
        'are complete, whose `data` need not meet FormData until submitted), is described at /api-docs-json.',
    },
    security: [{ bearer: [] }],
    paths: {
      '/api/data/{configId}': {
        parameters: [configId],
        get: {
          operationId: 'listRecords',
          summary: 'Active records, newest page first by `sortBy`',
          parameters: [
            { name: 'page', in: 'query', schema: { type: 'integer', minimum: 1 } },
            {
              name: 'limit',
              in: 'query',
              schema: { type: 'integer', minimum: 1, maximum: bounds.maxListRows },
            },
            { name: 'sortBy', in: 'query', schema: { type: 'string' } },
            { name: 'sortOrder', in: 'query', schema: { enum: ['asc', 'desc'] } },
            {
              name: 'filters',
              in: 'query',
              description: 'JSON object of field values',
              schema: { type: 'string' },
            },
            {
              name: 'configVersion',
              in: 'query',
              description: 'Only records last validated against this version of the form',
              schema: { type: 'integer', minimum: 1 },
            },
          ],
          responses: { 200: { description: 'A page of records', ...json(ref('RecordPage')) }, ...errors },
        },
        post: {
          operationId: 'createRecord',
          summary: 'Submit a record (validated against FormData, the rules and the save limit)',
          requestBody: submission,
          responses: { 201: saved, ...errors },
        },
      },
      '/api/data/{configId}/{dataId}': {
        parameters: [configId, dataId],
        get: { operationId: 'getRecord', responses: { 200: record, ...errors } },
        put: { operationId: 'replaceRecord', requestBody: submission, responses: { 200: saved, ...errors } },
        patch: {
          operationId: 'patchRecord',
          summary: 'Merge fields into the data; the result is validated against FormData',
          requestBody: { required: true, ...json(FREE_OBJECT) },
          responses: { 200: saved, ...errors },
        },
        delete: { operationId: 'deleteRecord', responses: { 200: record, ...errors } },
      },
      ...attachmentPaths(config.schema, { configId, dataId }, errors),
    },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      schemas: {
        FormData: config.schema ? relocated(config.schema) : FREE_OBJECT,
        Record: {
          type: 'object',
          required: [
            '_id',
            'configId',
            'userId',
            'siteId',
            'data',
            'isActive',
            'createdAt',
            'updatedAt',
            'version',
            'configVersion',
          ],
          properties: {
            _id: UUID,
            configId: UUID,
            userId: NULLABLE_UUID,
            siteId: NULLABLE_UUID,
            data: ref('FormData'),
            computedResults: FREE_OBJECT,
            isActive: { type: 'boolean' },
            createdAt: DATE_TIME,
            updatedAt: DATE_TIME,
            // Records in the trash only (the answer of a delete, the trash listing).
            deletedAt: DATE_TIME,
            version: { type: 'integer', minimum: 1 },
            configVersion: { type: 'integer', minimum: 1 },
            workflow: { type: 'array', items: FREE_OBJECT },
            // Forms with attachment fields: the files the record refers to.
            attachments: { type: 'array', items: ref('Attachment') },
          },
        },
        Attachment: ATTACHMENT_SCHEMA,
        SavedRecord: {
          type: 'object',
          required: ['success', 'dataId', 'data', 'computedResults'],
          properties: {
            success: { type: 'boolean' },
            dataId: UUID,
            data: ref('Record'),
            computedResults: FREE_OBJECT,
          },
        },
        RecordPage: {
          type: 'object',
          required: ['data', 'total', 'page', 'pages'],
          properties: {
            data: { type: 'array', items: ref('Record') },
            total: { type: 'integer' },
            page: { type: 'integer' },
            pages: { type: 'integer' },
          },
        },
        Error: {
          type: 'object',
          required: ['success', 'error', 'code', 'statusCode'],
          properties: {
            success: { const: false },
            error: { type: 'string' },
            code: { type: 'string' },
            statusCode: { type: 'integer' },
            validationErrors: {
              type: 'array',
              items: {
                type: 'object',
                required: ['field', 'rule', 'message'],
                properties: {
                  field: { type: 'string' },
                  rule: { type: 'string' },
                  message: { type: 'string' },
                },
              },
            },
            fieldResults: FREE_OBJECT,
            details: FREE_OBJECT,
          },
        },
      },
    },
  };
}
