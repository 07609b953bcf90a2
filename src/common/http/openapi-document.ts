import type { INestApplication } from '@nestjs/common';
import {
  ApiExtension,
  DocumentBuilder,
  getSchemaPath,
  SwaggerModule,
  type OpenAPIObject,
} from '@nestjs/swagger';
import type {
  OperationObject,
  ReferenceObject,
  ResponseObject,
  SchemaObject,
} from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { ErrorResponseDto, FieldErrorDto } from '../errors/error-response.dto';

/**
 * `AuthController` + `login` -> `authLogin`. A route served under several paths (`/auth` and
 * `/api/auth`) arrives as `login[1]`: the first path keeps the plain id, the others get `Alias<n>`,
 * so every id is unique and a valid identifier for client generators.
 */
export function operationId(controllerKey: string, methodKey: string): string {
  const resource = controllerKey.replace(/Controller$/, '');
  const [, method, alias] = /^([^[]+)(?:\[(\d+)\])?$/.exec(methodKey) ?? [methodKey, methodKey];
  const id =
    resource.charAt(0).toLowerCase() + resource.slice(1) + method.charAt(0).toUpperCase() + method.slice(1);
  return alias && alias !== '0' ? `${id}Alias${alias}` : id;
}

const FORM_BODY = 'x-form-body';
const FORM = 'application/x-www-form-urlencoded';

/**
 * The form-encoded body a route also takes beside its JSON one (the grid-library store's insert).
 * `@ApiBody` gives every media type one schema; this gives the form its own.
 */
export const ApiFormBody = (schema: SchemaObject) => ApiExtension(FORM_BODY, schema);

function addFormBody(operation: OperationObject & { [FORM_BODY]?: SchemaObject }): void {
  const schema = operation[FORM_BODY];
  if (!schema || !operation.requestBody || '$ref' in operation.requestBody) return;
  operation.requestBody.content[FORM] = { schema };
  delete operation[FORM_BODY];
}

const MULTIPART_BODY = 'x-multipart-body';
const MULTIPART = 'multipart/form-data';

/** The multipart/form-data body a route also takes beside its others (a record sent with its files). */
export const ApiMultipartBody = (schema: SchemaObject) => ApiExtension(MULTIPART_BODY, schema);

function addMultipartBody(operation: OperationObject & { [MULTIPART_BODY]?: SchemaObject }): void {
  const schema = operation[MULTIPART_BODY];
  if (!schema || !operation.requestBody || '$ref' in operation.requestBody) return;
  operation.requestBody.content[MULTIPART] = { schema };
  delete operation[MULTIPART_BODY];
}

const BODY_CONTENT = 'x-body-content';

/**
 * A request body of several media types each with its own schema and example (a file upload as
 * CSV, NDJSON or JSON), where `@ApiBody` gives every media type one schema.
 */
export const ApiBodyContent = (content: Record<string, { schema: SchemaObject; example?: unknown }>) =>
  ApiExtension(BODY_CONTENT, content);

function addBodyContent(
  operation: OperationObject & { [BODY_CONTENT]?: Record<string, { schema: SchemaObject }> },
): void {
  const content = operation[BODY_CONTENT];
  if (!content) return;
  operation.requestBody = { required: true, content };
  delete operation[BODY_CONTENT];
}

const CALLBACKS = 'x-callbacks';

/**
 * Requests the service itself sends because of this operation (webhook deliveries), as the
 * operation's OpenAPI `callbacks`: `{name: {'{$request.body#/url}': {post: ...}}}`.
 */
export const ApiCallbacks = (callbacks: Record<string, unknown>) => ApiExtension(CALLBACKS, callbacks);

function addCallbacks(operation: OperationObject & { [CALLBACKS]?: OperationObject['callbacks'] }): void {
  if (!operation[CALLBACKS]) return;
  operation.callbacks = operation[CALLBACKS];
  delete operation[CALLBACKS];
}

/**
 * Every 4xx and 5xx answer of every operation carries the one error body (ErrorResponseDto), and
 * every operation has a `default` answer with it: any route may also answer 422, 429 or 503. A form
 * body declared with ApiFormBody (a multipart one with ApiMultipartBody) joins the request body, callbacks declared with ApiCallbacks become
 * the operation's.
 */
function completeOperations(document: OpenAPIObject): void {
  const schema = { $ref: getSchemaPath(ErrorResponseDto) };
  for (const item of Object.values(document.paths)) {
    for (const operation of Object.values(item)) {
      if (typeof operation !== 'object' || operation === null || !('responses' in operation)) continue;
      addFormBody(operation);
      addMultipartBody(operation);
      addBodyContent(operation);
      addCallbacks(operation);
      const responses: Record<string, ResponseObject | ReferenceObject> = (operation.responses ??= {});
      responses.default ??= { description: 'An error (the status says which kind)' };
      for (const [status, response] of Object.entries(responses)) {
        if ((status === 'default' || Number(status) >= 400) && !('$ref' in response)) {
          response.content = { 'application/json': { schema } };
        }
      }
    }
  }
}

/** The service's OpenAPI document, served at /api-docs-json and behind Swagger UI at /api-docs. */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Form Data and Workflow Service')
    .setDescription(
      'Form configurations, validated submissions, listing (paging and grid-library forms), export, statistics, ' +
        'workflows, users, roles, form permissions and sites. Every error answers one body, `ErrorResponseDto`: ' +
        '`{success:false, error, code, statusCode, validationErrors?, fieldResults?, details?}`.\n\n' +
        "Each form also has its own document, whose record bodies are typed by the form's JSON Schema: " +
        '`GET /api/configs/{configId}/openapi.json` (the access rule of reading the configuration).',
    )
    .setVersion('1.0')
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' })
    .build();
  const document = SwaggerModule.createDocument(app, config, {
    extraModels: [ErrorResponseDto, FieldErrorDto],
    operationIdFactory: operationId,
  });
  completeOperations(document);
  return document;
}
