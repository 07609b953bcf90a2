import { adminToken } from '../factories/user.factory';
import { postConfig } from '../utils/api-requests';
import { useAppSuite } from '../utils/app-suite';
import type { TestApp } from '../utils/test-app';
import { createWorkflow, execute } from '../utils/workflow-api';

/**
 * Swagger UI's "Try it out": every request body and query example of /api-docs-json, built the way
 * Swagger UI builds it (explicit examples, else each property's example, default, first enum value
 * or a type placeholder), sent in an order a reader would follow, must be accepted (2xx). Only the
 * ids in the path, and a body's `configId` and the store form's `key` (the configuration and record
 * just created), are filled in, as a reader fills them in.
 */
type Schema = Record<string, any>;

/** The order a reader follows; every operation with an example must be listed. */
const ORDER = [
  'POST /auth/login',
  'POST /auth/register',
  'POST /api/sites',
  'PUT /api/sites/{siteId}',
  'POST /api/roles',
  'PUT /api/roles/{roleId}',
  'POST /api/users',
  'PUT /api/users/{userId}',
  'GET /api/users',
  'POST /api/configs',
  'PUT /api/configs/{configId}',
  'GET /api/configs/{configId}/versions',
  'GET /api/configs/{configId}/openapi.json',
  'GET /api/configs',
  'PUT /api/permissions/{configId}',
  'POST /api/data/{configId}',
  'PATCH /api/data/{configId}/{dataId}',
  'PUT /api/data/{configId}/{dataId}',
  'PUT /api/data/{configId}',
  'GET /api/data/{configId}',
  'GET /api/data/{configId}/{dataId}/history',
  'GET /api/data/{configId}/stats',
  'GET /api/data/{configId}/export',
  'POST /api/data/{configId}/import',
  'POST /api/data/{configId}/erase',
  'GET /api/erasures',
  'POST /api/workflow',
  'PUT /api/workflow/{workflowId}',
  'GET /api/workflow',
  'POST /api/workflow/{workflowId}/execute',
  'POST /api/workflow/runs/{runId}/rerun',
  'GET /api/workflow/{workflowId}/runs',
  'GET /api/workflow/runs',
  'POST /api/workflow/runs/{runId}/steps/{stepName}/decision',
  'POST /api/workflow/{workflowId}/runs/cancel',
  'POST /api/workflow/{workflowId}/runs/rerun',
  'POST /api/ai/configs/generate',
  'DELETE /api/data/{configId}',
  'POST /api/webhooks',
  'PUT /api/webhooks/{webhookId}',
  'GET /api/webhooks/{webhookId}/deliveries',
  'POST /auth/change-password',
  'POST /api/data/{configId}/attachments',
];

/** Where a created resource's id is, by the path parameter it fills. */
const CREATES: Record<string, [string, (body: any) => string]> = {
  'POST /api/sites': ['siteId', (body) => body.id],
  'POST /api/roles': ['roleId', (body) => body.id],
  'POST /api/users': ['userId', (body) => body.id],
  'POST /api/configs': ['configId', (body) => body.id],
  'POST /api/data/{configId}': ['dataId', (body) => body.dataId],
  'POST /api/workflow': ['workflowId', (body) => body.id],
  'POST /api/workflow/{workflowId}/execute': ['runId', (body) => body.runId],
  'POST /api/webhooks': ['webhookId', (body) => body.id],
};

/**
 * Operations on state a reader makes first, as they make it (through the API): run before the
 * operation's examples, they fill the ids its path needs.
 */
const PREPARE: Record<string, (t: TestApp, token: string, ids: Record<string, string>) => Promise<void>> = {
  // A reader uploads to a form with an attachment field (the body example is any file).
  'POST /api/data/{configId}/attachments': async (t, token, ids) => {
    const created = await postConfig(t, token, {
      title: 'Claims',
      type: 'form',
      schema: { type: 'object', properties: { receipt: { type: 'string', format: 'attachment' } } },
    });
    ids.configId = created.json().id;
  },
  // A decision needs a run waiting at an approval step (an admin decides: allowSelfApproval, as the admin started it).
  'POST /api/workflow/runs/{runId}/steps/{stepName}/decision': async (t, token, ids) => {
    const workflowId = await createWorkflow(t, token, {
      name: 'Approval',
      type: 'custom',
      config: {
        steps: [
          {
            name: 'approve',
            type: 'approval',
            config: { approvers: { roles: [] }, allowSelfApproval: true },
          },
        ],
      },
    });
    const waiting = await execute(t, token, workflowId, ids.configId, {});
    ids.runId = waiting.json().runId;
    ids.stepName = 'approve';
  },
};

/** Body fields a reader fills with an id, as they fill the path: the field, and whose id. */
const FILLED: Record<string, string> = { configId: 'configId', key: 'dataId' };
const PLACEHOLDER_UUID = '3fa85f64-5717-4562-b3fc-2c963f66afa6';

function resolve(document: Schema, schema: Schema): Schema {
  let current = schema;
  while (current?.$ref) current = document.components.schemas[String(current.$ref).split('/').pop()!];
  return current;
}

/** Swagger UI's sample of a schema (its rules, simplified to what this document uses). */
function sample(document: Schema, raw: Schema, ids: Record<string, string>, name?: string): unknown {
  const schema = resolve(document, raw);
  if ('example' in schema) return schema.example;
  if ('default' in schema) return schema.default;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if (schema.oneOf ?? schema.anyOf) return sample(document, (schema.oneOf ?? schema.anyOf)[0], ids, name);
  if (schema.allOf)
    return Object.assign({}, ...schema.allOf.map((part: Schema) => sample(document, part, ids)));
  switch (schema.type) {
    case 'array':
      return [sample(document, schema.items ?? {}, ids)];
    case 'integer':
    case 'number':
      return 0;
    case 'boolean':
      return true;
    case 'string':
      if (schema.format === 'uuid') return (name && FILLED[name] && ids[FILLED[name]]) || PLACEHOLDER_UUID;
      if (schema.format === 'date-time') return new Date().toISOString();
      if (schema.format === 'email') return 'user@example.com';
      return 'string';
  }
  if (schema.properties) {
    return Object.fromEntries(
      Object.entries(schema.properties as Record<string, Schema>).map(([key, property]) => [
        key,
        sample(document, property, ids, key),
      ]),
    );
  }
  return schema.additionalProperties ? { additionalProp1: {} } : {};
}

function bodyExample(document: Schema, media: Schema, ids: Record<string, string>): unknown {
  if ('example' in media) return media.example;
  const named = Object.values((media.examples ?? {}) as Record<string, { value: unknown }>);
  if (named.length > 0) return named[0].value;
  return sample(document, media.schema ?? {}, ids);
}

/** A multipart example as a client sends it: binary properties as file parts, the others as text parts. */
async function multipartExample(
  example: Record<string, string>,
  schema: Schema,
): Promise<{ payload: Buffer; headers: Record<string, string> }> {
  const form = new FormData();
  for (const [name, value] of Object.entries(example)) {
    if (schema.properties?.[name]?.format === 'binary') form.append(name, new Blob([value]), 'example.txt');
    else form.append(name, value);
  }
  const encoded = new Response(form);
  return {
    payload: Buffer.from(await encoded.arrayBuffer()),
    headers: { 'content-type': encoded.headers.get('content-type')! },
  };
}

describe('the examples of /api-docs-json', () => {
  const s = useAppSuite({ admin: false, seed: 'once' });

  it('are accepted by the service, in the order a reader follows', async () => {
    const document = (await s.t.request({ method: 'GET', url: '/api-docs-json' })).json();
    const operations = new Map<string, Schema>();
    for (const [path, item] of Object.entries(document.paths as Record<string, Schema>)) {
      for (const [method, operation] of Object.entries(item)) {
        const hasQuery = (operation.parameters ?? []).some((p: Schema) => p.in === 'query');
        // The second path of a route (/api/auth/... beside /auth/...) has the same handler and examples.
        if (/Alias\d+$/.test(operation.operationId)) continue;
        if (operation.requestBody || hasQuery) operations.set(`${method.toUpperCase()} ${path}`, operation);
      }
    }
    expect([...operations.keys()].filter((key) => !ORDER.includes(key))).toEqual([]);

    const ids: Record<string, string> = {};
    const refused: string[] = [];
    let token = await adminToken(s.t);
    for (const key of ORDER) {
      const operation = operations.get(key);
      if (!operation) continue;
      await PREPARE[key]?.(s.t, token, ids);
      const [method, template] = key.split(' ');
      const url = template.replace(/\{(\w+)\}/g, (_, name: string) => ids[name] ?? `{${name}}`);
      const schemaOf = (_key: string, type: string): Schema =>
        (operation.requestBody?.content?.[type]?.schema ?? {}) as Schema;
      const send = async (label: string, query: Record<string, string>, media?: [string, unknown]) => {
        const response = await s.t.request({
          method: method as 'GET',
          url,
          query,
          token,
          ...(media?.[0] === 'application/x-www-form-urlencoded'
            ? {
                payload: new URLSearchParams(media[1] as Record<string, string>).toString(),
                headers: { 'content-type': media[0] },
              }
            : media?.[0] === 'multipart/form-data'
              ? await multipartExample(media[1] as Record<string, string>, schemaOf(key, media[0]))
              : media && media[0] !== 'application/json'
                ? // A file upload's example (CSV, NDJSON) is sent as its text with its media type.
                  { payload: String(media[1]), headers: { 'content-type': media[0] } }
                : media
                  ? { payload: media[1] as object }
                  : {}),
        });
        if (response.statusCode >= 300)
          refused.push(`${label}: ${response.statusCode} ${response.body.slice(0, 300)}`);
        return response;
      };

      const content = (operation.requestBody?.content ?? {}) as Record<string, Schema>;
      for (const [type, media] of Object.entries(content)) {
        const response = await send(`${key} (${type})`, {}, [type, bodyExample(document, media, ids)]);
        const created = CREATES[key];
        if (created && response.statusCode < 300 && type === 'application/json')
          ids[created[0]] = created[1](response.json());
        if (key.endsWith('change-password') && response.statusCode < 300) token = response.json().token;
      }
      // Each query example, with the JSON body example when the route takes one.
      const json = content['application/json'];
      const body: [string, unknown] | undefined = json && [
        'application/json',
        bodyExample(document, json, ids),
      ];
      for (const parameter of (operation.parameters ?? []) as Schema[]) {
        const value = parameter.example ?? parameter.schema?.example ?? parameter.schema?.enum?.[0];
        if (parameter.in === 'query' && value !== undefined)
          await send(`${key} ?${parameter.name}=${value}`, { [parameter.name]: String(value) }, body);
      }
    }
    expect(refused).toEqual([]);
  }, 60_000);
});
