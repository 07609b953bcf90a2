import { sql } from 'drizzle-orm';
import { rowsOf } from '../../src/database/raw-rows';
import { createConfig } from '../factories/config.factory';
import { createUser, type TestUser } from '../factories/user.factory';
import { useAppSuite } from '../utils/app-suite';
import type { TestApp } from '../utils/test-app';
import { createWorkflow, workflowBody } from '../utils/workflow-api';
import { createSite } from '../factories/site.factory';

/**
 * A delegated author (a custom role granted configs and workflows writes) works in their own site
 * only: the site of a configuration or workflow is not theirs to choose. Another site or `null`
 * (shared) is 403 SITE_FORBIDDEN, omitting it stores the definition in the caller's site, a shared
 * definition cannot be changed, moved or deleted by them, and another site's is a 404 as on a read.
 */
describe('delegated authors stay inside their site', () => {
  let t: TestApp;
  let admin: string;
  let siteA: string;
  let siteB: string;
  let authorA: TestUser;
  let globalAuthor: TestUser;
  const onA = { host: 'alpha.example.com' };
  const onB = { host: 'beta.example.com' };
  const onNoSite = { host: 'elsewhere.example.com' };
  const forbidden = { success: false, code: 'SITE_FORBIDDEN', statusCode: 403, error: expect.any(String) };
  const send = (
    method: 'POST' | 'PUT' | 'DELETE',
    url: string,
    token: string,
    headers: Record<string, string>,
    payload?: object,
  ) => t.request({ method, url, token, headers, ...(payload ? { payload } : {}) });
  const siteOf = async (url: string) =>
    (await t.request({ method: 'GET', url, token: admin })).json().siteId as string | null;

  useAppSuite((suite) => ({ t, admin } = suite), { env: { EVENTS_POLL_MS: '50', WORKFLOW_POLL_MS: '50' } });
  beforeEach(async () => {
    siteA = await createSite(t, admin, 'Alpha', 'alpha.example.com');
    siteB = await createSite(t, admin, 'Beta', 'beta.example.com');
    const role = await t.request({
      method: 'POST',
      url: '/api/roles',
      token: admin,
      payload: {
        name: 'author',
        permissions: {
          configs: ['read', 'create', 'update', 'delete'],
          workflows: ['read', 'create', 'update', 'delete', 'execute'],
        },
      },
    });
    expect(role.statusCode).toBe(201);
    authorA = await createUser(t, { role: 'author', siteId: siteA });
    globalAuthor = await createUser(t, { role: 'author' });
  });

  describe.each([
    {
      what: 'configurations',
      base: '/api/configs',
      body: { title: 'By an author', type: 'form' },
      create: (token: string, extra: object) => createConfig(t, token, { title: 'By the admin', ...extra }),
      notFound: 'CONFIG_NOT_FOUND',
    },
    {
      what: 'workflows',
      base: '/api/workflow',
      body: workflowBody({ name: 'By an author' }),
      create: (token: string, extra: object) =>
        createWorkflow(t, token, workflowBody({ name: 'By the admin', ...extra })),
      notFound: 'WORKFLOW_NOT_FOUND',
    },
  ])('$what', ({ base, body, create, notFound }) => {
    it('create: another site or null is 403 SITE_FORBIDDEN; omitted or their own site stores it in their site', async () => {
      for (const siteId of [siteB, null]) {
        const refused = await send('POST', base, authorA.token, onA, { ...body, siteId });
        expect(refused.statusCode).toBe(403);
        expect(refused.json()).toEqual(forbidden);
      }
      const omitted = await send('POST', base, authorA.token, onA, body);
      expect(omitted.statusCode).toBe(201);
      expect(omitted.json().siteId).toBe(siteA);
      const named = await send('POST', base, authorA.token, onA, { ...body, siteId: siteA });
      expect(named.statusCode).toBe(201);
      expect(named.json().siteId).toBe(siteA);

      // A global author's site is the Host's; on a host of no site they have none, and may not share.
      const throughA = await send('POST', base, globalAuthor.token, onA, body);
      expect(throughA.statusCode).toBe(201);
      expect(throughA.json().siteId).toBe(siteA);
      const noSite = await send('POST', base, globalAuthor.token, onNoSite, body);
      expect(noSite.statusCode).toBe(403);
      expect(noSite.json()).toEqual(forbidden);

      // An admin still chooses: any site, or none (shared).
      const shared = await send('POST', base, admin, onA, { ...body, siteId: null });
      expect(shared.statusCode).toBe(201);
      expect(shared.json().siteId).toBeNull();
      const other = await send('POST', base, admin, onA, { ...body, siteId: siteB });
      expect(other.json().siteId).toBe(siteB);
    });

    it('update and delete: their own site only; a shared one is 403 (never moved), another site’s a 404', async () => {
      const own = await create(admin, { siteId: siteA });
      const shared = await create(admin, {});
      const ofB = await create(admin, { siteId: siteB });

      for (const siteId of [siteB, null]) {
        const moved = await send('PUT', `${base}/${own}`, authorA.token, onA, { siteId });
        expect(moved.statusCode).toBe(403);
        expect(moved.json()).toEqual(forbidden);
      }
      expect(await siteOf(`${base}/${own}`)).toBe(siteA);
      const renamed = await send('PUT', `${base}/${own}`, authorA.token, onA, { siteId: siteA, tags: ['x'] });
      expect(renamed.statusCode).toBe(200);
      expect(renamed.json()).toMatchObject({ id: own, siteId: siteA, tags: ['x'] });

      // A shared definition is visible to them, but theirs to neither change, take nor delete.
      for (const change of [{ tags: ['x'] }, { siteId: siteA }]) {
        const refused = await send('PUT', `${base}/${shared}`, authorA.token, onA, change);
        expect(refused.statusCode).toBe(403);
        expect(refused.json()).toEqual(forbidden);
      }
      const sharedRemoval = await send('DELETE', `${base}/${shared}`, authorA.token, onA);
      expect(sharedRemoval.statusCode).toBe(403);
      expect(sharedRemoval.json()).toEqual(forbidden);
      expect(await siteOf(`${base}/${shared}`)).toBeNull();
      expect(
        (await t.request({ method: 'GET', url: `${base}/${shared}`, token: admin })).json().tags,
      ).toEqual(expect.not.arrayContaining(['x']));
      // The same shared one, changed by a global author on a host of no site: still refused.
      const fromNoSite = await send('PUT', `${base}/${shared}`, globalAuthor.token, onNoSite, {
        tags: ['y'],
      });
      expect(fromNoSite.statusCode).toBe(403);
      expect(fromNoSite.json()).toEqual(forbidden);

      // Another site's is not found, as it is on a read.
      for (const [method, payload] of [
        ['PUT', { siteId: siteA }],
        ['DELETE', undefined],
      ] as const) {
        const hidden = await send(method, `${base}/${ofB}`, authorA.token, onA, payload);
        expect(hidden.statusCode).toBe(404);
        expect(hidden.json()).toMatchObject({ code: notFound });
      }
      expect(await siteOf(`${base}/${ofB}`)).toBe(siteB);

      const removal = await send('DELETE', `${base}/${own}`, authorA.token, onA);
      expect(removal.statusCode).toBe(200);
      // An admin moves and shares as before.
      const movedByAdmin = await send('PUT', `${base}/${ofB}`, admin, onA, { siteId: null });
      expect(movedByAdmin.statusCode).toBe(200);
      expect(movedByAdmin.json().siteId).toBeNull();
    });
  });

  it("an author's workflow triggered by a shared form's records sees only their site's records", async () => {
    const shared = await createConfig(t, admin, { title: 'Shared form' });
    const response = await send(
      'POST',
      '/api/workflow',
      authorA.token,
      onA,
      workflowBody({
        name: 'Copy every record',
        config: {
          steps: [
            { name: 'copy', type: 'transform', config: { source: 'savedData', mapping: { id: '_id' } } },
          ],
          triggers: [{ event: 'record.created', configId: shared }],
        },
      }),
    );
    expect(response.statusCode).toBe(201);
    const workflowId = response.json().id;
    const userA = await createUser(t, { siteId: siteA });
    const userB = await createUser(t, { siteId: siteB });
    for (const [user, headers] of [
      [userB, onB],
      [userA, onA],
    ] as const) {
      const saved = await send('POST', `/api/data/${shared}`, user.token, headers, { name: 'Ann', qty: 1 });
      expect(saved.statusCode).toBe(201);
    }

    // Wait until every event was handed out and no run is left to do.
    const deadline = Date.now() + 20_000;
    for (;;) {
      const [{ n }] = rowsOf(
        await t.database.client.db.execute(
          sql`select (select count(*) from domain_events) + (select count(*) from workflow_runs
            where status in ('queued', 'running')) as n`,
        ),
      );
      if (Number(n) === 0) break;
      if (Date.now() > deadline) throw new Error('events and runs did not settle');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const runs = (
      await t.request({ method: 'GET', url: `/api/workflow/${workflowId}/runs`, token: admin })
    ).json().data;
    expect(runs).toEqual([expect.objectContaining({ userId: userA.user.id, status: 'success' })]);
  });
});
