import fc from 'fast-check';
import { sql } from 'drizzle-orm';
import { rowsOf } from '../../src/database/raw-rows';
import { PasswordHasher } from '../../src/common/security/password-hasher';
import { ErasureProcessor } from '../../src/erasure/erasure.processor';
import { UsersRepository } from '../../src/users/users.repository';
import { adminToken } from '../factories/user.factory';
import { createConfig } from '../factories/config.factory';
import { createSite } from '../factories/site.factory';
import { createWorkflow, workflowBody } from '../utils/workflow-api';
import { postRecord } from '../utils/api-requests';
import { useAppSuite } from '../utils/app-suite';

/**
 * Every operation of the service's own OpenAPI document, called with requests generated from its
 * schema and hostile variants (wrong types, deep nesting, 100 KB strings, lone surrogates,
 * `__proto__` keys, arrays for objects, junk path and query values), with an admin token or none.
 * No request may answer 5xx, and a request answered 4xx must leave every table as it was.
 */

type Schema = Record<string, any>;
interface Operation {
  method: string;
  path: string;
  parameters: { name: string; in: string; schema?: Schema }[];
  body?: Schema;
}
interface FuzzRequest {
  method: string;
  url: string;
  payload?: string;
  contentType?: string;
  withToken: boolean;
}

// Fixed, so CI sees the same requests every time; FUZZ_SEED and FUZZ_RUNS explore further by hand.
const SEED = Number(process.env.FUZZ_SEED ?? 20261123);
const RUNS_PER_OPERATION = Number(process.env.FUZZ_RUNS ?? 12);
const HUGE = 'x'.repeat(100_000);
const TABLES = [
  'users',
  'roles',
  'sites',
  'form_configs',
  'form_permissions',
  'data_records',
  'workflows',
  'workflow_runs',
];

/** Raw JSON texts no schema produces: each must be refused with a 4xx, never a 5xx. */
const HOSTILE_BODIES = [
  '['.repeat(200) + ']'.repeat(200),
  '{"a":'.repeat(200) + '1' + '}'.repeat(200),
  '{"__proto__":{"isAdmin":true,"role":"admin"}}',
  '{"constructor":{"prototype":{"polluted":true}}}',
  '{"name":"\\ud800","title":"\\udfff"}',
  '{"\\ud800":1}',
  '[{"title":"x"}]',
  'null',
  '1',
  '"text"',
  '{',
  '',
  '{"a":1,"a":2}',
];

const junkText = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.constantFrom(
    '',
    ' ',
    '../../etc/passwd',
    "'; drop table users; --",
    '{"$gt":0}',
    '[]',
    '[1,2]',
    '{}',
    'null',
    'true',
    '-1',
    '0',
    '1e309',
    'NaN',
    '9'.repeat(400),
    '2021-02-30',
    '1/1/2020',
    '\u0000',
    'ZÜRICH',
  ),
  fc.constant(HUGE),
);

/** A path segment, already encoded: real ids, other uuids, junk, and malformed escapes. */
function pathValue(real: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...real) },
    { weight: 2, arbitrary: fc.uuid() },
    { weight: 2, arbitrary: junkText.map((text) => encodeURIComponent(text).slice(0, 20_000) || 'x') },
    { weight: 1, arbitrary: fc.constantFrom('%', '%zz', '%ED%A0%80', '%00', '..', '.', 'a'.repeat(5000)) },
  );
}

function resolve(document: Schema, schema: Schema | undefined): Schema | undefined {
  let current = schema;
  for (let i = 0; current?.$ref && i < 10; i++) {
    const name = String(current.$ref).split('/').pop()!;
    current = document.components?.schemas?.[name];
  }
  return current;
}

/** Values of a schema (shallow valid shapes), or anything at all when it says nothing useful. */
function fromSchema(document: Schema, raw: Schema | undefined, depth = 0): fc.Arbitrary<unknown> {
  const schema = resolve(document, raw);
  const anyValue = fc.oneof(fc.string({ maxLength: 20 }), fc.integer(), fc.boolean(), fc.constant(null));
  if (!schema || depth > 4) return anyValue;
  const choices = schema.oneOf ?? schema.anyOf;
  if (Array.isArray(choices) && choices.length > 0)
    return fc.oneof(...choices.map((choice: Schema) => fromSchema(document, choice, depth + 1)));
  if (Array.isArray(schema.allOf) && schema.allOf.length > 0)
    return fromSchema(document, schema.allOf[0], depth + 1);
  if (Array.isArray(schema.enum) && schema.enum.length > 0)
    return fc.oneof(fc.constantFrom(...schema.enum), fc.string({ maxLength: 10 }));
  const examples = schema.example !== undefined ? [fc.constant(schema.example)] : [];
  switch (schema.type) {
    case 'string':
      if (schema.format === 'email') return fc.oneof(fc.emailAddress(), junkText);
      if (schema.format === 'uuid') return fc.oneof(fc.uuid(), junkText);
      if (schema.format === 'date-time')
        return fc.oneof(
          fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
          junkText,
        );
      return fc.oneof(...examples, fc.string({ maxLength: 30 }), junkText);
    case 'integer':
      return fc.oneof(
        ...examples,
        fc.integer(),
        fc.constantFrom(0, -1, 2 ** 31, Number.MAX_SAFE_INTEGER, 1e300),
      );
    case 'number':
      return fc.oneof(...examples, fc.double({ noNaN: true, noDefaultInfinity: true }));
    case 'boolean':
      return fc.boolean();
    case 'array':
      return fc.oneof(...examples, fc.array(fromSchema(document, schema.items, depth + 1), { maxLength: 3 }));
    default: {
      const properties = (schema.properties ?? {}) as Record<string, Schema>;
      const names = Object.keys(properties);
      if (names.length === 0) {
        return fc.oneof(...examples, fc.dictionary(fc.string({ maxLength: 8 }), anyValue, { maxKeys: 4 }));
      }
      const record = fc.record(
        Object.fromEntries(names.map((name) => [name, fromSchema(document, properties[name], depth + 1)])),
        {
          requiredKeys:
            (schema.required as string[] | undefined)?.filter((name) => names.includes(name)) ?? [],
        },
      );
      return fc.oneof(...examples, record);
    }
  }
}

/** A schema-shaped object with its values swapped for other types, a huge string or an array. */
function wrongTyped(document: Schema, raw: Schema | undefined): fc.Arbitrary<unknown> {
  const schema = resolve(document, raw);
  const names = Object.keys(schema?.properties ?? {});
  const wrong = fc.oneof(
    fc.constant(HUGE),
    fc.constant([]),
    fc.constant({ nested: { deeper: [1, { x: null }] } }),
    fc.constant(-1e308),
    fc.constant(true),
    fc.constant(null),
    fc.string({ maxLength: 5 }),
  );
  if (names.length === 0) return fc.dictionary(fc.string({ maxLength: 8 }), wrong, { maxKeys: 5 });
  return fc.record(Object.fromEntries(names.map((name) => [name, wrong])));
}

function requestsFor(
  document: Schema,
  operation: Operation,
  ids: Record<string, string[]>,
  fallback: string[],
) {
  const pathParameters = operation.parameters.filter((p) => p.in === 'path');
  const queryParameters = operation.parameters.filter((p) => p.in === 'query');
  const path = fc.tuple(...pathParameters.map((parameter) => pathValue(ids[parameter.name] ?? fallback)));
  const query = fc.array(
    fc.tuple(
      fc.oneof(fc.constantFrom(...queryParameters.map((p) => p.name), 'junk'), fc.constant('__proto__')),
      fc.oneof(
        junkText,
        ...queryParameters.map((p) =>
          fromSchema(document, p.schema).map((value) =>
            typeof value === 'string' ? value : (JSON.stringify(value) ?? ''),
          ),
        ),
      ),
    ),
    { maxLength: queryParameters.length > 0 ? 4 : 1 },
  );
  const body: fc.Arbitrary<string | undefined> = operation.body
    ? fc.oneof(
        { weight: 4, arbitrary: fromSchema(document, operation.body).map((value) => JSON.stringify(value)) },
        { weight: 2, arbitrary: wrongTyped(document, operation.body).map((value) => JSON.stringify(value)) },
        { weight: 2, arbitrary: fc.constantFrom(...HOSTILE_BODIES) },
        {
          weight: 1,
          arbitrary: fromSchema(document, operation.body).map((value) => JSON.stringify([value])),
        },
      )
    : fc.oneof(
        { weight: 4, arbitrary: fc.constant(undefined) },
        { weight: 1, arbitrary: fc.constantFrom(...HOSTILE_BODIES) },
      );
  const request = fc.record({
    path,
    query,
    body,
    withToken: fc.oneof(
      { weight: 5, arbitrary: fc.constant(true) },
      { weight: 1, arbitrary: fc.constant(false) },
    ),
    // Mostly JSON; sometimes the grid store's form encoding (valid-looking or not), or plain text.
    encoding: fc.oneof(
      { weight: 8, arbitrary: fc.constant('json' as const) },
      { weight: 1, arbitrary: fc.constantFrom('values' as const, 'key-values' as const, 'text' as const) },
    ),
  });
  return fc
    .sample(request, {
      seed: SEED + operation.path.length * 31 + operation.method.length,
      numRuns: RUNS_PER_OPERATION,
    })
    .map(({ path: values, query: pairs, body: json, withToken, encoding }): FuzzRequest => {
      let url = operation.path;
      pathParameters.forEach((parameter, index) => {
        url = url.replace(`{${parameter.name}}`, values[index]);
      });
      const search = pairs
        .map(
          ([name, value]) =>
            `${encodeURIComponent(name)}=${encodeURIComponent(value.replace(/[\ud800-\udfff]/g, '?'))}`,
        )
        .join('&');
      const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
      const [payload, contentType] =
        json === undefined
          ? [undefined, undefined]
          : encoding === 'json'
            ? [json, 'application/json']
            : encoding === 'values'
              ? [form({ values: json }), 'application/x-www-form-urlencoded']
              : encoding === 'key-values'
                ? [
                    form({ key: values[values.length - 1] ?? 'x', values: json }),
                    'application/x-www-form-urlencoded',
                  ]
                : [json, 'text/plain'];
      return {
        method: operation.method.toUpperCase(),
        url: search ? `${url}?${search}` : url,
        payload,
        contentType,
        withToken,
      };
    });
}

/** The service's one error body: `{success: false, error, code, statusCode}` with the response's status. */
function inErrorBodyShape(text: string, status: number): boolean {
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    return (
      body.success === false &&
      typeof body.error === 'string' &&
      typeof body.code === 'string' &&
      /^[A-Z][A-Z0-9_]*$/.test(body.code) &&
      body.statusCode === status
    );
  } catch {
    return false;
  }
}
describe('OpenAPI fuzz: no 5xx, and a 4xx changes nothing', () => {
  // The victim (the user) owns the record the operations meet.
  const s = useAppSuite({ users: [{ email: 'victim@example.com' }], seed: 'once' });

  /** One text per table: every row, in id order, so any insert, update or delete shows. */
  const fingerprint = async () =>
    rowsOf(
      await s.t.database.client.db.execute(
        sql.raw(
          `select ${TABLES.map((table) => `(select md5(coalesce(string_agg(t::text, ',' order by t::text), '')) from ${table} t) as "${table}"`).join(', ')}`,
        ),
      ),
    )[0];

  it('every operation, hostile inputs included', async () => {
    const { t, user: victim } = s;
    // Logout and the password change end the admin's token: `admin` is a fresh one after them.
    let admin = s.admin;
    const document = (await t.request({ method: 'GET', url: '/api-docs-json' })).json<Schema>();
    const configId = await createConfig(t, admin);
    const record = await postRecord(t, victim.token, configId, { name: 'Fuzz', qty: 2, price: 1 });
    const role = await t.request({
      method: 'POST',
      url: '/api/roles',
      token: admin,
      payload: { name: 'fuzzrole', description: 'fuzz', permissions: {} },
    });
    const site = await createSite(t, admin, 'Fuzz site', 'fuzz.example.com');
    const workflowId = await createWorkflow(t, admin, workflowBody({ name: 'Fuzz' }));
    const ids: Record<string, string[]> = {
      configId: [configId],
      dataId: [record.json().dataId],
      // Never the admin: a fuzzed update could change its e-mail and end the run's access.
      userId: [victim.user.id],
      roleId: [role.json().id],
      siteId: [site],
      workflowId: [workflowId],
      runId: [workflowId],
    };
    const fallback = Object.values(ids).flat();

    const operations: Operation[] = [];
    for (const [path, item] of Object.entries(document.paths as Record<string, Schema>)) {
      for (const method of ['get', 'post', 'put', 'patch', 'delete']) {
        const operation = item[method];
        if (!operation) continue;
        operations.push({
          method,
          path,
          parameters: operation.parameters ?? [],
          body: operation.requestBody?.content?.['application/json']?.schema,
        });
      }
    }
    expect(operations.length).toBeGreaterThan(30);
    // Destructive operations last, so the others meet live resources; logout and password change
    // would end the admin's token: a fresh one is fetched after them.
    const rank = (operation: Operation) => (operation.method === 'delete' ? 1 : 0);
    operations.sort((a, b) => rank(a) - rank(b));

    const failures: string[] = [];
    let before = await fingerprint();
    let count = 0;
    for (const operation of operations) {
      for (const request of requestsFor(document, operation, ids, fallback)) {
        count++;
        const response = await t.request({
          method: request.method as 'GET',
          url: request.url,
          payload: request.payload,
          headers: request.contentType ? { 'content-type': request.contentType } : {},
          token: request.withToken ? admin : undefined,
        });
        // An accepted erasure goes on in the background: its changes belong to this request, not the next.
        await t.app.get(ErasureProcessor).settled();
        const label = `${request.method} ${request.url.slice(0, 160)} body=${(request.payload ?? '').slice(0, 160)}`;
        if (response.statusCode >= 500) {
          failures.push(`${response.statusCode} ${label}: ${response.body.slice(0, 300)}`);
        }
        const after = await fingerprint();
        if (response.statusCode >= 400 && response.statusCode < 500) {
          const changed = TABLES.filter((table) => before[table] !== after[table]);
          if (changed.length > 0)
            failures.push(`${response.statusCode} changed ${changed.join(', ')}: ${label}`);
          if (!inErrorBodyShape(response.body, response.statusCode))
            failures.push(
              `${response.statusCode} not in the error body: ${label}: ${response.body.slice(0, 300)}`,
            );
        }
        before = after;
        if ((await t.request({ method: 'GET', url: '/auth/me', token: admin })).statusCode !== 200) {
          // The change-password example is the admin's real password: put it back after a change.
          const row = await t.app.get(UsersRepository).findByEmail(t.config.adminEmail);
          await t.app
            .get(UsersRepository)
            .replacePasswordAndRevokeTokens(
              row!.id,
              await t.app.get(PasswordHasher).hash(t.config.adminPassword),
            );
          admin = await adminToken(t);
          before = await fingerprint();
        }
      }
    }
    expect(count).toBeGreaterThan(400);
    expect(failures).toEqual([]);
  }, 180_000);
});
