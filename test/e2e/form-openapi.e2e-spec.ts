import { ORDER_FORM, createConfig } from '../factories/config.factory';
import { createUser } from '../factories/user.factory';
import { createClientWorkspace } from '../utils/generated-client';
import { useAppSuite } from '../utils/app-suite';
import { replaceFormPermissions } from '../utils/workflow-api';

/** GET /api/configs/:configId/openapi.json: one form's record routes, typed by its own JSON Schema. */
describe('the per-form OpenAPI document', () => {
  const s = useAppSuite({ forms: 1, seed: 'once' });

  const fetchDocument = (token?: string, id = s.configId) =>
    s.t.request({ method: 'GET', url: `/api/configs/${id}/openapi.json`, token });
  const readConfig = (token?: string, id = s.configId) =>
    s.t.request({ method: 'GET', url: `/api/configs/${id}`, token });

  it('is OpenAPI 3.1 whose FormData is the stored schema and whose version is the updatedAt', async () => {
    const config = (await readConfig(s.admin)).json();
    const response = await fetchDocument(s.admin);

    expect(response.statusCode).toBe(200);
    const document = response.json();
    expect(document.openapi).toBe('3.1.0');
    expect(document.info.version).toBe(config.updatedAt);
    expect(document.components.schemas.FormData).toEqual(ORDER_FORM.schema);
    expect(
      document.paths['/api/data/{configId}'].post.requestBody.content['application/json'].schema,
    ).toEqual({
      $ref: '#/components/schemas/FormData',
    });
    expect(document.components.schemas.Record.properties.data).toEqual({
      $ref: '#/components/schemas/FormData',
    });

    await new Promise((resolve) => setTimeout(resolve, 5));
    await s.t.request({
      method: 'PUT',
      url: `/api/configs/${s.configId}`,
      token: s.admin,
      payload: { title: 'Orders 2' },
    });
    const changed = (await fetchDocument(s.admin)).json();
    expect(changed.info.version).not.toBe(config.updatedAt);
    expect(changed.info.version).toBe((await readConfig(s.admin)).json().updatedAt);
  });

  it("keeps the schema's own references meaning what they meant: pointers moved under FormData, its $id dropped, anchors kept", async () => {
    const id = await createConfig(s.t, s.admin, {
      schema: {
        $id: 'https://forms.example/order',
        type: 'object',
        $defs: { qty: { $anchor: 'qty', type: 'integer', minimum: 1 } },
        properties: {
          qty: { $ref: '#/$defs/qty' },
          again: { $ref: '#qty' },
          self: { $ref: '#' },
        },
      },
    });
    const document = (await fetchDocument(s.admin, id)).json();
    const formData = document.components.schemas.FormData;
    expect(formData.$id).toBeUndefined();
    expect(formData.properties).toEqual({
      qty: { $ref: '#/components/schemas/FormData/$defs/qty' },
      again: { $ref: '#qty' },
      self: { $ref: '#/components/schemas/FormData' },
    });
    const limit = document.paths['/api/data/{configId}'].get.parameters.find(
      (parameter: { name: string }) => parameter.name === 'limit',
    );
    expect(limit.schema.maximum).toBe(1000); // LIST_MAX_ROWS
  });

  it('answers like reading the configuration: 401 without a token, 403 without viewForm, 404 unknown', async () => {
    const user = await createUser(s.t);
    const other = await createConfig(s.t, s.admin, { title: 'Closed' });
    await replaceFormPermissions(s.t, s.admin, other, { roles: { user: [] } });

    for (const [token, id] of [
      [undefined, s.configId],
      [user.token, other],
      [s.admin, '5c7b3f0e-8f1e-4a43-9d1c-2a3b4c5d6e7f'],
    ] as const) {
      const read = await readConfig(token, id);
      const document = await fetchDocument(token, id);
      expect([document.statusCode, document.json().code]).toEqual([read.statusCode, read.json().code]);
    }
    expect((await fetchDocument(undefined)).statusCode).toBe(401);
    expect((await fetchDocument(user.token, other)).statusCode).toBe(403);
    expect((await fetchDocument(user.token)).statusCode).toBe(200);
  });

  it("generates a client whose record data has the form's fields", async () => {
    const workspace = createClientWorkspace();
    await workspace.generate((await fetchDocument(s.admin)).json(), 'form');
    const typed = (body: string) => `import type { components, paths } from './form';
export type Submission = paths['/api/data/{configId}']['post']['requestBody']['content']['application/json'];
export type Stored = components['schemas']['Record']['data'];
${body}
`;
    const right = workspace.write(
      'right.ts',
      typed(`const submission: Submission = { name: 'Ann', qty: 2, price: 9.5, city: 'Pécs' };
const qty: number = ((stored: Stored) => stored.qty)(submission);
console.log(qty);`),
    );
    const wrongType = workspace.write(
      'wrong-type.ts',
      typed(`const submission: Submission = { name: 'Ann', qty: 'two' };\nconsole.log(submission);`),
    );
    const missing = workspace.write(
      'missing.ts',
      typed(`const submission: Submission = { qty: 2 };\nconsole.log(submission);`),
    );
    const unknownField = workspace.write(
      'unknown.ts',
      typed(`const read = (stored: Stored): string => stored.nmae;\nconsole.log(read);`),
    );

    const diagnostics = workspace.compile([right, wrongType, missing, unknownField]);

    expect(diagnostics.get(right)).toEqual([]);
    expect(diagnostics.get(wrongType)).toEqual([
      expect.stringContaining("Type 'string' is not assignable to type 'number'"),
    ]);
    expect(diagnostics.get(missing)).toEqual([expect.stringContaining("Property 'name' is missing")]);
    expect(diagnostics.get(unknownField)).toEqual([expect.stringContaining("'nmae'")]);
  }, 60_000);
});
