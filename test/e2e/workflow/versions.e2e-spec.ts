import { useAppSuite } from '../../utils/app-suite';
import { createWorkflow, workflowBody } from '../../utils/workflow-api';

/** GET /api/workflow/:workflowId/versions and /versions/:version (README "Versions and conditional requests"). */
describe('workflow definition versions', () => {
  let adminId: string;
  const s = useAppSuite({ users: 1 });
  beforeEach(async () => {
    adminId = (await s.t.request({ method: 'GET', url: '/api/auth/me', token: s.admin })).json().id;
  });

  const get = (url: string, token = s.admin) => s.t.request({ method: 'GET', url, token });
  const put = (id: string, payload: Record<string, unknown>, ifMatch?: string) =>
    s.t.request({
      method: 'PUT',
      url: `/api/workflow/${id}`,
      token: s.admin,
      payload,
      headers: ifMatch ? { 'if-match': ifMatch } : {},
    });

  it('lists every version newest first with who saved it, when and what changed; each version reads back as saved', async () => {
    const id = await createWorkflow(s.t, s.admin, workflowBody({ name: 'Intake' }));
    expect((await put(id, { name: 'Intake v2' }, '"1"')).statusCode).toBe(200);
    const steps = [{ name: 'shape', type: 'transform', config: { mapping: { who: 'email' } } }];
    expect((await put(id, { config: { steps }, tags: ['crm'] }, '"2"')).statusCode).toBe(200);

    const listed = await get(`/api/workflow/${id}/versions`);
    expect(listed.statusCode).toBe(200);
    expect(listed.json()).toEqual({
      data: [
        { version: 3, savedBy: adminId, savedAt: expect.any(String), changed: ['config', 'tags'] },
        { version: 2, savedBy: adminId, savedAt: expect.any(String), changed: ['name'] },
        { version: 1, savedBy: adminId, savedAt: expect.any(String), changed: null },
      ],
      totalCount: 3,
    });

    const first = await get(`/api/workflow/${id}/versions/1`);
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({
      workflowId: id,
      version: 1,
      name: 'Intake',
      config: workflowBody().config,
      tags: [],
      isActive: true,
    });
    expect((await get(`/api/workflow/${id}/versions/3`)).json()).toMatchObject({
      name: 'Intake v2',
      config: { steps },
      tags: ['crm'],
    });
  });

  it('a stale If-Match writes no version; an unknown or malformed version is a 404; a reader who may not run the workflow gets 404', async () => {
    const id = await createWorkflow(s.t, s.admin, workflowBody({ permissions: { roles: [] } }));
    const stale = await put(id, { name: 'Lost' }, '"7"');
    expect(stale.statusCode).toBe(412);
    expect((await get(`/api/workflow/${id}/versions`)).json().totalCount).toBe(1);

    for (const version of ['2', '0', 'abc', '1.5']) {
      const missing = await get(`/api/workflow/${id}/versions/${version}`);
      expect(missing.statusCode).toBe(404);
      expect(missing.json()).toMatchObject({ code: 'WORKFLOW_VERSION_NOT_FOUND' });
    }
    const noWorkflow = await get('/api/workflow/00000000-0000-4000-8000-000000000000/versions');
    expect(noWorkflow.statusCode).toBe(404);
    expect(noWorkflow.json()).toMatchObject({ code: 'WORKFLOW_NOT_FOUND' });

    // Admins only may run it: a user cannot see it, nor its versions.
    const hidden = await get(`/api/workflow/${id}/versions`, s.user.token);
    expect(hidden.statusCode).toBe(404);
    expect(hidden.json()).toMatchObject({ code: 'WORKFLOW_NOT_FOUND' });
    expect((await get(`/api/workflow/${id}/versions`, '')).statusCode).toBe(401);
  });
});
