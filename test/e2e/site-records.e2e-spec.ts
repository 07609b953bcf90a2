import { sql } from 'drizzle-orm';
import { RecordsService } from '../../src/data/records.service';
import { rowsOf } from '../../src/database/raw-rows';
import { createUser, type TestUser } from '../factories/user.factory';
import { createConfig } from '../factories/config.factory';
import { createTwoSites, ON_A as onA, ON_B as onB, ON_NO_SITE as onNoSite } from '../factories/two-sites';
import { createSteps, execute } from '../utils/workflow-api';
import { useAppSuite } from '../utils/app-suite';
import { errorBody } from '../utils/error-body';
import { requestAs } from '../utils/request-as';
import { contextOf } from '../utils/user-context';

/**
 * A record of a shared form (no site) belongs to the site of the request it came
 * through, and a caller bound to a site sees only its own site's records and runs, on every route.
 */
describe('records and runs of a shared form belong to the site they came through', () => {
  const s = useAppSuite();
  let siteA: string;
  let siteB: string;
  let userA: TestUser;
  let managerA: TestUser;
  let managerB: TestUser;
  let globalManager: TestUser;
  let shared: string;
  const SECRET = { name: 'Ann', ssn: '123-45-6789' };
  const get = (url: string, token: string, headers: Record<string, string> = {}) =>
    requestAs(s.t, token, 'GET', url, undefined, headers);

  beforeEach(async () => {
    ({ siteA, siteB } = await createTwoSites(s.t, s.admin));
    userA = await createUser(s.t, { siteId: siteA });
    managerA = await createUser(s.t, { role: 'manager', siteId: siteA });
    managerB = await createUser(s.t, { role: 'manager', siteId: siteB });
    globalManager = await createUser(s.t, { role: 'manager' });
    shared = await createConfig(s.t, s.admin, {
      title: 'Shared form',
      schema: {
        type: 'object',
        required: ['name'],
        properties: { name: { type: 'string' }, ssn: { type: 'string' } },
      },
      validationRules: [],
      computedRules: [],
    });
  });

  const submitOnA = async () => {
    const response = await requestAs(s.t, userA.token, 'POST', `/api/data/${shared}`, SECRET, onA);
    expect(response.statusCode).toBe(201);
    return response.json();
  };

  it("stores the Host's site on a shared form's record", async () => {
    const saved = await submitOnA();
    expect(saved.data.siteId).toBe(siteA);
    const read = await get(`/api/data/${shared}/${saved.dataId}`, s.admin);
    expect(read.json()).toMatchObject({ _id: saved.dataId, siteId: siteA, data: SECRET });
  });

  it("site B's manager on site B's host gets nothing of site A's record on any route", async () => {
    const { dataId } = await submitOnA();
    const base = `/api/data/${shared}`;

    expect((await get(base, managerB.token, onB)).json()).toEqual({ data: [], total: 0, page: 1, pages: 0 });
    const grid = await get(`${base}?take=10&requireTotalCount=true`, managerB.token, onB);
    expect(grid.statusCode).toBe(200);
    expect(grid.json()).toMatchObject({ data: [], totalCount: 0 });

    const notFound = errorBody(404, 'RECORD_NOT_FOUND', 'Record not found.');
    const single = await get(`${base}/${dataId}`, managerB.token, onB);
    expect(single.statusCode).toBe(404);
    expect(single.json()).toEqual(notFound);
    for (const method of ['PUT', 'PATCH', 'DELETE'] as const) {
      const change = await s.t.request({
        method,
        url: `${base}/${dataId}`,
        token: managerB.token,
        headers: onB,
        ...(method !== 'DELETE' && { payload: { name: 'changed' } }),
      });
      expect({ method, status: change.statusCode, body: change.json() }).toEqual({
        method,
        status: 404,
        body: notFound,
      });
    }
    const storeEdit = await requestAs(
      s.t,
      managerB.token,
      'PUT',
      base,
      `key=${dataId}&values=${encodeURIComponent(JSON.stringify({ 'data.name': 'x' }))}`,
      { ...onB, 'content-type': 'application/x-www-form-urlencoded' },
    );
    expect(storeEdit.statusCode).toBe(404);
    expect(storeEdit.json()).toEqual(notFound);

    const json = await get(`${base}/export?format=json`, managerB.token, onB);
    expect(json.statusCode).toBe(200);
    expect(json.json()).toEqual([]);
    const csv = await get(`${base}/export?format=csv`, managerB.token, onB);
    expect(csv.statusCode).toBe(200);
    expect(csv.body).toBe('');
    expect(csv.body).not.toContain(SECRET.ssn);
    const xlsx = await get(`${base}/export?format=excel`, managerB.token, onB);
    expect(xlsx.statusCode).toBe(200);

    const stats = await get(`${base}/stats`, managerB.token, onB);
    expect(stats.json()).toEqual({ total: 0, today: 0, thisWeek: 0, byUser: [] });

    // Still there for its own site and for admins.
    expect((await get(`${base}/${dataId}`, s.admin)).statusCode).toBe(200);
  });

  it("site A's manager and admins see the record; a caller without a site does not", async () => {
    const { dataId } = await submitOnA();
    const base = `/api/data/${shared}`;
    const listA = (await get(base, managerA.token, onA)).json();
    expect(listA.total).toBe(1);
    expect(listA.data[0]).toMatchObject({ _id: dataId, siteId: siteA, data: SECRET });
    expect((await get(`${base}/${dataId}`, managerA.token, onA)).statusCode).toBe(200);
    const exportA = (await get(`${base}/export?format=json`, managerA.token, onA)).json();
    expect(exportA.map((record: any) => record._id)).toEqual([dataId]);
    const csvA = await get(`${base}/export?format=csv`, managerA.token, onA);
    expect(csvA.body).toContain(SECRET.ssn);
    expect((await get(`${base}/stats`, managerA.token, onA)).json().total).toBe(1);

    const adminList = (await get(base, s.admin)).json();
    expect(adminList.total).toBe(1);
    expect((await get(`${base}/stats`, s.admin)).json().total).toBe(1);

    expect((await get(base, globalManager.token, onNoSite)).json().total).toBe(0);
    expect((await get(`${base}/${dataId}`, globalManager.token, onNoSite)).statusCode).toBe(404);
    // A global user on site B's host works as site B.
    expect((await get(base, globalManager.token, onB)).json().total).toBe(0);
    expect((await get(base, globalManager.token, onA)).json().total).toBe(1);
  });

  it('a record without a site (stored before migration 0007) is seen only by admins and callers without a site', async () => {
    const [old] = rowsOf(
      await s.t.database.client.db.execute(
        sql`insert into data_records (config_id, user_id, data)
            values (${shared}::uuid, ${userA.user.id}::uuid, '{"name": "old"}') returning id`,
      ),
    ) as { id: string }[];
    const base = `/api/data/${shared}`;
    expect((await get(base, managerA.token, onA)).json().total).toBe(0);
    expect((await get(base, managerB.token, onB)).json().total).toBe(0);
    expect((await get(`${base}/${old.id}`, managerB.token, onB)).statusCode).toBe(404);
    expect((await get(base, globalManager.token, onNoSite)).json().total).toBe(1);
    expect((await get(base, s.admin)).json().total).toBe(1);
  });

  it("without a Host site the record takes the submitting user's site", async () => {
    const saved = await s.t.app.get(RecordsService).create(contextOf(userA.user), shared, { name: 'Job' });
    expect(saved.data.siteId).toBe(siteA);
  });

  it('a save limit counts only the records of the site submitted to', async () => {
    const limited = await createConfig(s.t, s.admin, {
      preferences: { saveLimit: 1, allowEdit: false, allowDelete: false, storeComputedResults: false },
    });
    const submit = (headers: Record<string, string>) =>
      requestAs(s.t, globalManager.token, 'POST', `/api/data/${limited}`, { name: 'Ann', qty: 1 }, headers);
    expect((await submit(onA)).statusCode).toBe(201);
    const onSiteB = await submit(onB);
    expect(onSiteB.statusCode).toBe(201);
    expect(onSiteB.json().data.siteId).toBe(siteB);
    const again = await submit(onA);
    expect(again.statusCode).toBe(400);
    expect(again.json()).toMatchObject({ code: 'DATA_SAVE_LIMIT_REACHED', details: { limit: 1 } });
  });

  it("a workflow save step on a shared form stores site A's site, and runs stay with their site", async () => {
    const workflowId = await createSteps(s.t, s.admin, [{ name: 'store', type: 'save' }], {
      permissions: { roles: ['user', 'manager'] },
    });
    const ran = await execute(s.t, userA.token, workflowId, shared, SECRET, onA);
    expect(ran.statusCode).toBe(200);
    const { runId, results } = ran.json();
    const dataId = results.store.dataId as string;
    const stored = await get(`/api/data/${shared}/${dataId}`, s.admin);
    expect(stored.json()).toMatchObject({ siteId: siteA, data: SECRET });
    expect((await get(`/api/data/${shared}/${dataId}`, managerB.token, onB)).statusCode).toBe(404);
    expect((await get(`/api/data/${shared}`, managerA.token, onA)).json().total).toBe(1);
    expect((await get(`/api/workflow/runs/${runId}`, s.admin)).json()).toMatchObject({ id: runId });

    // A global user's run through site A's host is site A's: not listed or read through site B's.
    const globalRun = await execute(s.t, globalManager.token, workflowId, shared, { name: 'G' }, onA);
    expect(globalRun.statusCode).toBe(200);
    const globalRunId = globalRun.json().runId;
    const history = (headers: Record<string, string>) =>
      get(`/api/workflow/${workflowId}/runs`, globalManager.token, headers);
    expect((await history(onA)).json()).toMatchObject({ totalCount: 1, data: [{ id: globalRunId }] });
    expect((await history(onB)).json()).toMatchObject({ totalCount: 0, data: [] });
    expect((await history(onNoSite)).json()).toMatchObject({ totalCount: 0, data: [] });
    const foreign = await get(`/api/workflow/runs/${globalRunId}`, globalManager.token, onB);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toEqual(errorBody(404, 'WORKFLOW_RUN_NOT_FOUND', 'Workflow run not found.'));
    expect((await get(`/api/workflow/${workflowId}/runs`, managerB.token, onB)).json().totalCount).toBe(0);
    expect((await get(`/api/workflow/${workflowId}/runs`, s.admin)).json().totalCount).toBe(2);
  });

  it('GET /api/sites: admins see every site, others only their own', async () => {
    const names = async (token: string, headers: Record<string, string> = {}) => {
      const response = await get('/api/sites', token, headers);
      expect(response.statusCode).toBe(200);
      return { names: response.json().data.map((site: any) => site.name), total: response.json().totalCount };
    };
    expect(await names(s.admin)).toEqual({ names: ['Alpha', 'Beta'], total: 2 });
    expect(await names(userA.token, onA)).toEqual({ names: ['Alpha'], total: 1 });
    expect(await names(managerB.token, onB)).toEqual({ names: ['Beta'], total: 1 });
    expect(await names(globalManager.token, onB)).toEqual({ names: ['Beta'], total: 1 });
    expect(await names(globalManager.token, onNoSite)).toEqual({ names: [], total: 0 });

    const foreign = await get(`/api/sites/${siteB}`, userA.token, onA);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toEqual(errorBody(404, 'SITE_NOT_FOUND', 'Site not found.'));
    expect((await get(`/api/sites/${siteA}`, userA.token, onA)).json()).toMatchObject({ id: siteA });
    expect((await get(`/api/sites/${siteA}`, globalManager.token, onNoSite)).statusCode).toBe(404);
    expect((await get(`/api/sites/${siteB}`, s.admin)).statusCode).toBe(200);
  });
});
