import { readFileSync } from 'node:fs';
import { createClientWorkspace } from '../utils/generated-client';
import { useAppSuite } from '../utils/app-suite';

/**
 * An API consumer's first hour: types generated from /api-docs-json by openapi-typescript with its
 * default settings, and an openapi-fetch script that logs in, creates a configuration and a
 * workflow, runs it and lists the records, compiled with `strict` and no cast or `any`.
 */
const CLIENT_SCRIPT = `
import createClient from 'openapi-fetch';
import type { components, paths } from './api';

type ErrorBody = components['schemas']['ErrorResponseDto'];

function fail(error: ErrorBody): never {
  const fields = (error.validationErrors ?? []).map((e) => e.field + ': ' + e.message).join('; ');
  throw new Error(error.code + ' (' + error.statusCode + '): ' + error.error + ' ' + fields);
}

export async function orderIntake(baseUrl: string): Promise<number> {
  const client = createClient<paths>({ baseUrl });

  const login = await client.POST('/auth/login', {
    body: { email: 'admin@example.com', password: 'admin12345' },
  });
  if (login.error) fail(login.error);
  const headers = { authorization: 'Bearer ' + login.data.token };

  const config = await client.POST('/api/configs', {
    headers,
    body: {
      title: 'Orders',
      type: 'form',
      schema: {
        type: 'object',
        required: ['name', 'qty'],
        properties: { name: { type: 'string' }, qty: { type: 'integer', minimum: 1 } },
      },
      validationRules: [{ name: 'few', rule: { '<=': [{ var: 'qty' }, 100] }, message: { en: 'At most 100' } }],
      computedRules: [{ field: 'double', expression: { '*': [{ var: 'qty' }, 2] } }],
      preferences: { saveLimit: null, storeComputedResults: true },
      definition: { layout: [{ field: 'name' }, { field: 'qty' }] },
    },
  });
  if (config.error) fail(config.error);
  const configId: string = config.data.id;
  const schema: { [key: string]: unknown } | null = config.data.schema;

  const workflow = await client.POST('/api/workflow', {
    headers,
    body: {
      name: 'Order intake',
      type: 'save',
      config: {
        steps: [
          { name: 'check', type: 'validate' },
          { name: 'store', type: 'save', onError: 'rollback', condition: { '>': [{ var: 'input.qty' }, 0] } },
          { name: 'shape', type: 'transform', config: { mapping: { customer: 'name' } } },
        ],
        retry: { enabled: true, maxAttempts: 2 },
      },
      permissions: { roles: ['user'] },
    },
  });
  if (workflow.error) fail(workflow.error);

  const execution = await client.POST('/api/workflow/{workflowId}/execute', {
    headers,
    params: { path: { workflowId: workflow.data.id }, query: { dryRun: 'false' } },
    body: { configId, data: { name: 'Ann', qty: 2 } },
  });
  if (execution.error) fail(execution.error);
  if (!('steps' in execution.data)) throw new Error('queued: ' + execution.data.runId);
  const runId: string | null = execution.data.runId;
  const results: { [key: string]: unknown } = execution.data.results;
  for (const step of execution.data.steps) {
    const result: unknown = step.result;
    if (step.error) throw new Error(step.name + ': ' + step.error.code + ' ' + String(result));
  }

  const records = await client.GET('/api/data/{configId}', {
    headers,
    params: { path: { configId }, query: { page: 1, limit: 10, sortBy: 'createdAt', sortOrder: 'desc' } },
  });
  if (records.error) fail(records.error);
  if (!('page' in records.data)) throw new Error('expected the paging form');
  const names: unknown[] = records.data.data.map((record) => record.data.name);
  if (names[0] !== 'Ann') throw new Error('the run saved no record: ' + JSON.stringify(execution.data.steps));

  const csv = await client.GET('/api/data/{configId}/export', {
    headers,
    params: { path: { configId }, query: { format: 'csv', columns: 'name,qty' } },
    parseAs: 'text',
  });
  if (csv.error) fail(csv.error);
  if (!csv.data.includes('Ann')) throw new Error('export: ' + csv.data);

  return names.length + (runId ? 1 : 0) + Object.keys(results).length + (schema ? 1 : 0) + csv.data.length;
}
`;

describe('a client generated from /api-docs-json', () => {
  const s = useAppSuite({ admin: false, seed: 'once', listen: true });

  it('type-checks a strict openapi-fetch script with no cast and no any', async () => {
    const response = await s.t.request({ method: 'GET', url: '/api-docs-json' });
    expect(response.statusCode).toBe(200);
    const workspace = createClientWorkspace();
    const types = await workspace.generate(response.json(), 'api');
    expect(CLIENT_SCRIPT).not.toMatch(/\bany\b|\bas [A-Za-z{]/);
    const script = workspace.write('client.ts', CLIENT_SCRIPT);

    const diagnostics = workspace.compile([script]);

    expect(diagnostics.get(script)).toEqual([]);
    // Free-form values are objects with any keys, never `{}`-only objects.
    expect(readFileSync(types, 'utf8').match(/^ {8,}.*Record<string, never>/gm)).toBeNull();

    // And the script works against the service: what type-checks also runs.
    expect(Number(await workspace.run(script, 'orderIntake', `http://127.0.0.1:${s.port}`))).toBeGreaterThan(
      0,
    );
  }, 120_000);

  it('has clean unique operation ids, typed query parameters, one error body and a nullable dry-run runId', async () => {
    const document = (await s.t.request({ method: 'GET', url: '/api-docs-json' })).json();
    const ids: string[] = [];
    const untyped: string[] = [];
    const errorsWithoutBody: string[] = [];
    for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, any>>)) {
      for (const [method, operation] of Object.entries(item)) {
        ids.push(operation.operationId);
        for (const parameter of operation.parameters ?? [])
          if (parameter.in === 'query' && !parameter.schema?.type)
            untyped.push(`${method} ${path} ${parameter.name}`);
        for (const [status, response] of Object.entries(operation.responses as Record<string, any>))
          if (
            (status === 'default' || Number(status) >= 400) &&
            response.content?.['application/json']?.schema?.$ref !== '#/components/schemas/ErrorResponseDto'
          )
            errorsWithoutBody.push(`${method} ${path} ${status}`);
      }
    }
    expect(ids.filter((id) => !/^[a-z][A-Za-z0-9]*$/.test(id))).toEqual([]);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(expect.arrayContaining(['authLogin', 'authLoginAlias1']));
    expect(untyped).toEqual([]);
    expect(errorsWithoutBody).toEqual([]);

    const result = document.components.schemas.WorkflowResultDto.properties;
    expect(result.runId).toMatchObject({ type: 'string', nullable: true });
    expect(result.status.example).toBe('success');
    const exported = document.paths['/api/data/{configId}/export'].get.responses['200'].content;
    expect(Object.keys(exported)).toEqual([
      'application/json',
      'text/csv',
      'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
      'application/zip',
    ]);
  });
});
