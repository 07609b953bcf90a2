import { sql } from 'drizzle-orm';
import { rowsOf } from '../../src/database/raw-rows';
import { createConfig } from '../factories/config.factory';
import { createRole } from '../factories/role.factory';
import { createTwoSites, ON_A as onA, ON_B as onB, ON_NO_SITE as onNoSite } from '../factories/two-sites';
import { createUser, type TestUser } from '../factories/user.factory';
import { useAppSuite } from '../utils/app-suite';
import { errorBody } from '../utils/error-body';
import { requestAs } from '../utils/request-as';
import { untilTrue } from '../utils/until';
import { createWorkflow, workflowBody } from '../utils/workflow-api';

/**
 * A delegated author (a custom role granted configs and workflows writes) works in their own site
 * only: the site of a configuration or workflow is not theirs to choose. Another site or `null`
 * (shared) is 403 SITE_FORBIDDEN, omitting it stores the definition in the caller's site, a shared
 * definition cannot be changed, moved or deleted by them, and another site's is a 404 as on a read.
 */
describe('delegated authors stay inside their site', () => {
  const s = useAppSuite({ env: { EVENTS_POLL_MS: '50', WORKFLOW_POLL_MS: '50' } });
  let siteA: string;
  let siteB: string;
  let authorA: TestUser;
  let globalAuthor: TestUser;
  const forbidden = errorBody(403, 'SITE_FORBIDDEN', expect.any(String));
  const send = (
    method: 'POST' | 'PUT' | 'DELETE',
    url: string,
    token: string,
    headers: Record<string, string>,
    payload?: object,
  ) => requestAs(s.t, token, method, url, payload, headers);
  const siteOf = async (url: string) =>
    (await requestAs(s.t, s.admin, 'GET', url)).json().siteId as string | null;

  beforeEach(async () => {
    ({ siteA, siteB } = await createTwoSites(s.t, s.admin));
    await createRole(s.t, s.admin, 'author', {
      configs: ['read', 'create', 'update', 'delete'],
      workflows: ['read', 'create', 'update', 'delete', 'execute'],
    });
    authorA = await createUser(s.t, { role: 'author', siteId: siteA });
    globalAuthor = await createUser(s.t, { role: 'author' });
  });

  describe.each([
    {
      what: 'configurations',
      base: '/api/configs',
      body: { title: 'By an author', type: 'form' },
      create: (token: string, extra: object) => createConfig(s.t, token, { title: 'By the admin', ...extra }),
      notFound: 'CONFIG_NOT_FOUND',
    },
    {
      what: 'workflows',
      base: '/api/workflow',
      body: workflowBody({ name: 'By an author' }),
      create: (token: string, extra: object) =>
        createWorkflow(s.t, token, workflowBody({ name: 'By the admin', ...extra })),
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
      const shared = await send('POST', base, s.admin, onA, { ...body, siteId: null });
      expect(shared.statusCode).toBe(201);
      expect(shared.json().siteId).toBeNull();
      const other = await send('POST', base, s.admin, onA, { ...body, siteId: siteB });
      expect(other.json().siteId).toBe(siteB);
    });

    it('update and delete: their own site only; a shared one is 403 (never moved), another site’s a 404', async () => {
      const own = await create(s.admin, { siteId: siteA });
      const shared = await create(s.admin, {});
      const ofB = await create(s.admin, { siteId: siteB });

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
      expect((await requestAs(s.t, s.admin, 'GET', `${base}/${shared}`)).json().tags).toEqual(
        expect.not.arrayContaining(['x']),
      );
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
      const movedByAdmin = await send('PUT', `${base}/${ofB}`, s.admin, onA, { siteId: null });
      expect(movedByAdmin.statusCode).toBe(200);
      expect(movedByAdmin.json().siteId).toBeNull();
    });
  });

  it("an author's workflow triggered by a shared form's records sees only their site's records", async () => {
    const shared = await createConfig(s.t, s.admin, { title: 'Shared form' });
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
    const userA = await createUser(s.t, { siteId: siteA });
    const userB = await createUser(s.t, { siteId: siteB });
    for (const [user, headers] of [
      [userB, onB],
      [userA, onA],
    ] as const) {
      const saved = await send('POST', `/api/data/${shared}`, user.token, headers, { name: 'Ann', qty: 1 });
      expect(saved.statusCode).toBe(201);
    }

    // Wait until every event was handed out and no run is left to do.
    await untilTrue(async () => {
      const [{ n }] = rowsOf(
        await s.t.database.client.db.execute(
          sql`select (select count(*) from domain_events) + (select count(*) from workflow_runs
            where status in ('queued', 'running')) as n`,
        ),
      );
      return Number(n) === 0;
    }, 'events and runs to settle');
    const runs = (await requestAs(s.t, s.admin, 'GET', `/api/workflow/${workflowId}/runs`)).json().data;
    expect(runs).toEqual([expect.objectContaining({ userId: userA.user.id, status: 'success' })]);
  });
});
