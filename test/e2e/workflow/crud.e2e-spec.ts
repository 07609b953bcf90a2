import { createConfig } from '../../factories/config.factory';
import { createUser } from '../../factories/user.factory';
import { useAppSuite } from '../../utils/app-suite';
import { createSteps, createWorkflow, execute, postWorkflow, workflowBody } from '../../utils/workflow-api';
import { createSite } from '../../factories/site.factory';

const ZERO = '00000000-0000-4000-8000-000000000000';

describe('workflow definitions: CRUD, access, validation and tenants', () => {
  const s = useAppSuite({
    env: { WORKFLOW_ENV_ALLOWLIST: 'API_TOKEN', WORKFLOW_ENV_ORIGINS: 'API_TOKEN=https://example.com' },
    users: 1,
  });

  const list = async (token: string, query = '', headers?: Record<string, string>) => {
    const response = await s.t.request({ method: 'GET', url: `/api/workflow${query}`, token, headers });
    expect(response.statusCode).toBe(200);
    return response.json<{ data: any[]; totalCount: number }>();
  };
  const names = (page: { data: any[] }) => page.data.map((w) => w.name);
  const getWorkflow = (id: string, token = s.admin, headers?: Record<string, string>) =>
    s.t.request({ method: 'GET', url: `/api/workflow/${id}`, token, headers });

  it('creates a workflow (201) echoing the body with an id, isActive true and defaults; GET returns the same', async () => {
    const steps = [
      { name: 'check', type: 'validate', config: {} },
      { name: 'store', type: 'save', config: {}, onError: 'rollback' },
    ];
    const created = await postWorkflow(s.t, s.admin, {
      name: 'Order intake',
      type: 'save',
      config: { steps },
    });
    expect(created.statusCode).toBe(201);
    const body = created.json();
    expect(body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'Order intake',
      alias: null,
      description: null,
      type: 'save',
      config: { steps },
      permissions: { roles: [], users: [] },
      tags: [],
      siteId: null,
      isActive: true,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      version: 1,
      // Who saved the definition: whom a trigger with runAs "author" runs as.
      authorId: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    const fetched = await getWorkflow(body.id);
    expect(fetched.statusCode).toBe(200);
    expect(fetched.json()).toEqual(body);
  });

  it('lists {data, totalCount} filtered by type and by every given tag', async () => {
    await createWorkflow(s.t, s.admin, workflowBody({ name: 'A', type: 'save', tags: ['orders', 'eu'] }));
    await createWorkflow(s.t, s.admin, workflowBody({ name: 'B', type: 'save', tags: ['orders'] }));
    await createWorkflow(s.t, s.admin, workflowBody({ name: 'C', type: 'notification', tags: ['eu'] }));

    const all = await list(s.admin);
    expect(all.totalCount).toBe(3);
    expect(names(all)).toEqual(['A', 'B', 'C']);
    expect(names(await list(s.admin, '?type=save'))).toEqual(['A', 'B']);
    expect(await list(s.admin, '?tags=orders,eu')).toMatchObject({ totalCount: 1, data: [{ name: 'A' }] });
    expect(names(await list(s.admin, '?tags=eu'))).toEqual(['A', 'C']);
    expect(await list(s.admin, '?type=notification&tags=orders')).toEqual({ data: [], totalCount: 0 });
    const badType = await s.t.request({ method: 'GET', url: '/api/workflow?type=nope', token: s.admin });
    expect(badType.statusCode).toBe(422);
  });

  it('PUT replaces the named fields and keeps the omitted ones', async () => {
    const original = workflowBody({
      name: 'Before',
      alias: 'before',
      description: 'kept',
      tags: ['x'],
    });
    const id = await createWorkflow(s.t, s.admin, original);
    const updated = await s.t.request({
      method: 'PUT',
      url: `/api/workflow/${id}`,
      token: s.admin,
      payload: { name: 'After', tags: ['y', 'z'] },
    });
    expect(updated.statusCode).toBe(200);
    expect(updated.json()).toMatchObject({
      id,
      name: 'After',
      alias: 'before',
      description: 'kept',
      type: 'custom',
      tags: ['y', 'z'],
      permissions: { roles: ['user'], users: [] },
      config: original.config,
      isActive: true,
    });
    const fetched = (await getWorkflow(id)).json();
    expect(fetched).toEqual(updated.json());

    const invalid = await s.t.request({
      method: 'PUT',
      url: `/api/workflow/${id}`,
      token: s.admin,
      payload: { config: { steps: [{ name: 'x', type: 'teleport' }] } },
    });
    expect(invalid.statusCode).toBe(422);
    expect(invalid.json().validationErrors).toEqual([
      expect.objectContaining({ field: 'config.steps[0].type', rule: 'stepType' }),
    ]);
    // A refused update changes nothing.
    expect((await getWorkflow(id)).json()).toEqual(fetched);
  });

  it('DELETE deactivates: 404 WORKFLOW_NOT_FOUND afterwards, gone from the list, listed by admins with isActive=false', async () => {
    const keep = await createWorkflow(s.t, s.admin, workflowBody({ name: 'Keep' }));
    const id = await createWorkflow(s.t, s.admin, workflowBody({ name: 'Gone' }));
    const deleted = await s.t.request({ method: 'DELETE', url: `/api/workflow/${id}`, token: s.admin });
    expect(deleted.statusCode).toBe(200);
    expect(deleted.json()).toMatchObject({ id, name: 'Gone', isActive: false });

    for (const token of [s.admin, s.user.token]) {
      const got = await getWorkflow(id, token);
      expect(got.statusCode).toBe(404);
      expect(got.json()).toMatchObject({ success: false, code: 'WORKFLOW_NOT_FOUND', statusCode: 404 });
    }
    expect(await list(s.admin)).toMatchObject({ totalCount: 1, data: [{ id: keep }] });
    expect(await list(s.admin, '?isActive=false')).toMatchObject({
      totalCount: 1,
      data: [{ id, isActive: false }],
    });
    // A non-admin cannot list deactivated workflows: the flag is ignored for them.
    expect(await list(s.user.token, '?isActive=false')).toMatchObject({
      totalCount: 1,
      data: [{ id: keep }],
    });

    const again = await s.t.request({ method: 'DELETE', url: `/api/workflow/${id}`, token: s.admin });
    expect(again.statusCode).toBe(404);
    const update = await s.t.request({
      method: 'PUT',
      url: `/api/workflow/${id}`,
      token: s.admin,
      payload: { name: 'Back' },
    });
    expect(update.statusCode).toBe(404);
    const configId = await createConfig(s.t, s.admin);
    const run = await execute(s.t, s.user.token, id, configId, { name: 'Ann', qty: 1 });
    expect(run.statusCode).toBe(404);
    expect(run.json().code).toBe('WORKFLOW_NOT_FOUND');
  });

  it('a non-admin lists only the workflows naming their role or their id, and cannot read the others', async () => {
    const manager = await createUser(s.t, { role: 'manager' });
    const byRole = await createWorkflow(s.t, s.admin, workflowBody({ name: 'By role' }));
    await createWorkflow(
      s.t,
      s.admin,
      workflowBody({ name: 'Managers', permissions: { roles: ['manager'] } }),
    );
    const byId = await createWorkflow(
      s.t,
      s.admin,
      workflowBody({ name: 'By id', permissions: { roles: [], users: [s.user.user.id] } }),
    );
    const adminsOnly = await createWorkflow(
      s.t,
      s.admin,
      workflowBody({ name: 'Admins only', permissions: {} }),
    );

    expect(names(await list(s.user.token))).toEqual(['By id', 'By role']);
    expect(names(await list(manager.token))).toEqual(['Managers']);
    expect((await list(s.admin)).totalCount).toBe(4);

    for (const id of [byRole, byId]) {
      expect((await getWorkflow(id, s.user.token)).statusCode).toBe(200);
    }
    const hidden = await getWorkflow(adminsOnly, s.user.token);
    // Like the list, a single read does not reveal a workflow the caller may not run.
    expect(hidden.statusCode).toBe(404);
    expect(hidden.json()).toMatchObject({ success: false, code: 'WORKFLOW_NOT_FOUND' });
  });

  it('a user may not create, update or delete workflows (403); without a token every route is 401', async () => {
    const id = await createWorkflow(s.t, s.admin, workflowBody({ name: 'Mine' }));
    const attempts = [
      { method: 'POST' as const, url: '/api/workflow', payload: workflowBody() },
      { method: 'PUT' as const, url: `/api/workflow/${id}`, payload: { name: 'Hijacked' } },
      { method: 'DELETE' as const, url: `/api/workflow/${id}` },
    ];
    for (const attempt of attempts) {
      const response = await s.t.request({ ...attempt, token: s.user.token });
      expect(response.statusCode).toBe(403);
      expect(response.json()).toMatchObject({ success: false, code: 'FORBIDDEN', statusCode: 403 });
    }
    expect(await list(s.admin)).toMatchObject({
      totalCount: 1,
      data: [{ id, name: 'Mine', isActive: true }],
    });

    const anonymous = [
      ...attempts,
      { method: 'GET' as const, url: '/api/workflow' },
      { method: 'GET' as const, url: `/api/workflow/${id}` },
      { method: 'GET' as const, url: `/api/workflow/${id}/runs` },
      { method: 'GET' as const, url: `/api/workflow/runs/${ZERO}` },
      { method: 'POST' as const, url: `/api/workflow/${id}/execute`, payload: { configId: ZERO, data: {} } },
    ];
    for (const attempt of anonymous) {
      const response = await s.t.request(attempt);
      expect(response.statusCode).toBe(401);
      expect(response.json()).toMatchObject({ success: false, statusCode: 401 });
    }
  });

  const api = (config: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    name: 'call',
    type: 'api',
    config: { url: 'https://example.com/hook', ...config },
    ...extra,
  });
  const transform = { name: 'shape', type: 'transform', config: { mapping: { a: 'b' } } };

  it.each<[string, unknown[], string, string]>([
    [
      'an unknown step type',
      [transform, { name: 'x', type: 'teleport' }],
      'config.steps[1].type',
      'stepType',
    ],
    [
      'a duplicate step name',
      [transform, { ...transform, config: { mapping: { c: 'd' } } }],
      'config.steps[1].name',
      'unique',
    ],
    ['a bad api method', [api({ method: 'TRACE' })], 'config.steps[0].config.method', 'isIn'],
    [
      'a template reading through a prototype',
      [api({ url: 'https://example.com/{{input.__proto__}}' })],
      'config.steps[0].config.url',
      'template',
    ],
    [
      'an env name outside WORKFLOW_ENV_ALLOWLIST in the url',
      [api({ url: 'https://example.com/?k={{env.SECRET}}' })],
      'config.steps[0].config.url',
      'template',
    ],
    [
      'an env name outside WORKFLOW_ENV_ALLOWLIST in a header',
      [api({ headers: { Authorization: 'Bearer {{env.DATABASE_URL}}' } })],
      'config.steps[0].config.headers.Authorization',
      'template',
    ],
    [
      'a template in a payload reading constructor',
      [transform, api({ method: 'POST', payload: { x: '{{results.shape.constructor}}' } })],
      'config.steps[1].config.payload.x',
      'template',
    ],
    [
      'a condition through a prototype',
      [{ ...transform, condition: 'input.__proto__.polluted' }],
      'config.steps[0].condition',
      'condition',
    ],
    [
      'a condition reading env',
      [{ ...transform, condition: 'env.API_TOKEN' }],
      'config.steps[0].condition',
      'condition',
    ],
  ])('a definition with %s is a 422 naming the step', async (_, steps, field, rule) => {
    const response = await postWorkflow(s.t, s.admin, workflowBody({ config: { steps } }));
    expect(response.statusCode).toBe(422);
    const body = response.json();
    expect(body).toMatchObject({ success: false, code: 'VALIDATION_FAILED', statusCode: 422 });
    expect(body.validationErrors).toEqual([{ field, rule, message: expect.any(String) }]);
    expect((await list(s.admin)).totalCount).toBe(0);
  });

  it('an execute body or query of the wrong shape is a 422 naming each field; nothing runs', async () => {
    const configId = await createConfig(s.t, s.admin);
    const workflowId = await createSteps(s.t, s.admin, [{ name: 'store', type: 'save' }]);
    const run = (payload: unknown, query = '') =>
      s.t.request({
        method: 'POST',
        url: `/api/workflow/${workflowId}/execute${query}`,
        token: s.admin,
        payload: payload as object,
      });
    const fieldsOf = async (payload: unknown, query = '') => {
      const response = await run(payload, query);
      expect(response.statusCode).toBe(422);
      expect(response.json()).toMatchObject({ success: false, code: 'VALIDATION_FAILED' });
      return response.json().validationErrors.map((e: { field: string; rule: string }) => [e.field, e.rule]);
    };
    expect(await fieldsOf({ configId: 'x', data: {} })).toEqual([['configId', 'isUuid']]);
    expect(await fieldsOf({ configId, data: 'text' })).toEqual([['data', 'isObject']]);
    expect(await fieldsOf({ configId, data: {}, extra: 1 })).toEqual([['extra', 'whitelistValidation']]);
    expect(await fieldsOf({})).toEqual([
      ['configId', 'required'],
      ['data', 'required'],
    ]);
    expect(await fieldsOf({ configId, data: { name: 'x' } }, '?dryRun=maybe')).toEqual([['dryRun', 'isIn']]);
    const records = await s.t.request({ method: 'GET', url: `/api/data/${configId}`, token: s.admin });
    expect(records.json().total).toBe(0);
    // The data is taken as sent: nested values and key order reach the run unchanged.
    const data = { name: 'Ann', nested: { b: [1, { c: null }], a: 'x' }, qty: 2 };
    const ran = await run({ configId, data });
    expect(ran.statusCode).toBe(200);
    expect(ran.json().data.data).toEqual(data);
    expect(Object.keys(ran.json().data.data)).toEqual(['name', 'nested', 'qty']);
  });

  it('an allow-listed env name is accepted; more than 50 steps is a 422, 50 are fine', async () => {
    const ok = await postWorkflow(
      s.t,
      s.admin,
      workflowBody({ config: { steps: [api({ headers: { Authorization: 'Bearer {{env.API_TOKEN}}' } })] } }),
    );
    expect(ok.statusCode).toBe(201);
    const steps = Array.from({ length: 51 }, (_, i) => ({ ...transform, name: `s${i}` }));
    const tooMany = await postWorkflow(s.t, s.admin, workflowBody({ config: { steps } }));
    expect(tooMany.statusCode).toBe(422);
    expect(tooMany.json().validationErrors).toEqual([
      { field: 'config.steps', rule: 'arrayMaxSize', message: expect.any(String) },
    ]);
    const fifty = await postWorkflow(s.t, s.admin, workflowBody({ config: { steps: steps.slice(0, 50) } }));
    expect(fifty.statusCode).toBe(201);
  });

  it('a workflow of a site is a 404 to a user of another site and visible on its own host', async () => {
    const beta = await createSite(s.t, s.admin, 'Beta', 'beta.example.com');
    const gamma = await createSite(s.t, s.admin, 'Gamma', 'gamma.example.com');
    const onBeta = { host: 'beta.example.com' };
    const onGamma = { host: 'gamma.example.com' };
    const betaUser = await createUser(s.t, { siteId: beta });
    const gammaUser = await createUser(s.t, { siteId: gamma });
    const id = await createWorkflow(s.t, s.admin, workflowBody({ name: 'Beta only', siteId: beta }));
    const configId = await createConfig(s.t, s.admin);

    const seen = await getWorkflow(id, betaUser.token, onBeta);
    expect(seen.statusCode).toBe(200);
    expect(seen.json()).toMatchObject({ id, siteId: beta });
    expect(names(await list(betaUser.token, '', onBeta))).toEqual(['Beta only']);

    const foreign = await getWorkflow(id, gammaUser.token, onGamma);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().code).toBe('WORKFLOW_NOT_FOUND');
    expect(await list(gammaUser.token, '', onGamma)).toEqual({ data: [], totalCount: 0 });
    const foreignRun = await execute(s.t, gammaUser.token, id, configId, { name: 'Ann', qty: 1 }, onGamma);
    expect(foreignRun.statusCode).toBe(404);
    expect(foreignRun.json().code).toBe('WORKFLOW_NOT_FOUND');
    // A global user on a host without a site sees no site's workflow either.
    const global = await getWorkflow(id, s.user.token, { host: 'elsewhere.example.com' });
    expect(global.statusCode).toBe(404);

    const unknownSite = await postWorkflow(s.t, s.admin, workflowBody({ siteId: ZERO }));
    expect(unknownSite.statusCode).toBe(422);
    expect(unknownSite.json().validationErrors).toEqual([
      { field: 'siteId', rule: 'exists', message: expect.any(String) },
    ]);
  });
});
