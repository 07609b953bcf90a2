import type { LightMyRequestResponse } from 'fastify';
import { buildRequestContext } from '../../src/common/context/request-context';
import { AppError } from '../../src/common/errors/app-error';
import { RecordsService } from '../../src/data/records.service';
import type { TestUser } from '../factories/user.factory';
import { createConfig } from '../factories/config.factory';
import { createSite } from '../factories/site.factory';
import { useAppSuite } from '../utils/app-suite';
import { createdAnswer } from '../utils/record-answers';
import { requestAs } from '../utils/request-as';
import { contextOf } from '../utils/user-context';

const ZERO = '00000000-0000-4000-8000-000000000000';

type Answer = { status: number; code?: string };

/** What a service call ended with, in the terms of an HTTP answer. */
async function answerOf(call: Promise<unknown>): Promise<Answer> {
  try {
    await call;
    return { status: 200 };
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return { status: error.status, code: error.code };
  }
}

function answerOfResponse(response: LightMyRequestResponse): Answer {
  if (response.statusCode < 300) return { status: 200 };
  return { status: response.statusCode, code: response.json().code };
}

/**
 * The record service called the way a workflow run will call it, with a context built outside HTTP:
 * it must give the same 404/403/own-only answers as the routes, which the guard also protects.
 */
describe('the record service outside HTTP', () => {
  /** alice, bob and a manager; a form without a schema or rules. */
  const s = useAppSuite({
    users: [{}, {}, { role: 'manager' }],
    forms: [{ schema: null, validationRules: [], computedRules: [] }],
  });
  const records = () => s.t.app.get(RecordsService);

  const viaHttp = async (method: 'GET' | 'POST', url: string, caller: TestUser, payload?: object) =>
    answerOfResponse(await requestAs(s.t, caller.token, method, url, payload));

  it('creates a record and answers in the route shape', async () => {
    const { configId } = s;
    const [alice] = s.users;
    const saved = await records().create(contextOf(alice.user), configId, { city: 'Paris' });
    expect(saved).toEqual(
      createdAnswer(saved.dataId, { configId, userId: alice.user.id, data: { city: 'Paris' } }),
    );
  });

  it('404 CONFIG_NOT_FOUND for an unknown, malformed or deactivated configuration, as the route', async () => {
    const { configId } = s;
    const [alice] = s.users;
    await s.t.request({ method: 'DELETE', url: `/api/configs/${configId}`, token: s.admin });
    for (const id of [ZERO, 'not-a-uuid', configId]) {
      const expected = { status: 404, code: 'CONFIG_NOT_FOUND' };
      expect(await answerOf(records().create(contextOf(alice.user), id, { a: 1 }))).toEqual(expected);
      expect(await viaHttp('POST', `/api/data/${id}`, alice, { a: 1 })).toEqual(expected);
      expect(await answerOf(records().list(contextOf(alice.user), id, {}))).toEqual(expected);
    }
  });

  it("404 for another site's configuration, before the permission check", async () => {
    const [alice] = s.users;
    const site = await createSite(s.t, s.admin, 'Shop', 'shop.example.com');
    const siteConfig = await createConfig(s.t, s.admin, { siteId: site });
    const expected = { status: 404, code: 'CONFIG_NOT_FOUND' };
    expect(await answerOf(records().create(contextOf(alice.user), siteConfig, { a: 1 }))).toEqual(expected);
    expect(await viaHttp('POST', `/api/data/${siteConfig}`, alice, { a: 1 })).toEqual(expected);
    // On the site's own host it is there.
    expect(
      await answerOf(records().create(contextOf(alice.user, site), siteConfig, { name: 'x', qty: 1 })),
    ).toEqual({ status: 200 });
  });

  it('403 FORBIDDEN without the form permission, as the route', async () => {
    const { configId } = s;
    const [alice, , manager] = s.users;
    await s.t.request({
      method: 'PUT',
      url: `/api/permissions/${configId}`,
      token: s.admin,
      payload: { roles: { user: ['viewForm', 'viewOwnResults'] } },
    });
    const expected = { status: 403, code: 'FORBIDDEN' };
    expect(await answerOf(records().create(contextOf(alice.user), configId, { a: 1 }))).toEqual(expected);
    expect(await viaHttp('POST', `/api/data/${configId}`, alice, { a: 1 })).toEqual(expected);
    // The manager role has no grant on this configuration any more: not even its list.
    expect(await answerOf(records().list(contextOf(manager.user), configId, {}))).toEqual(expected);
    expect(await viaHttp('GET', `/api/data/${configId}`, manager)).toEqual(expected);
  });

  it('401 UNAUTHORIZED for a context without a user', async () => {
    const { configId } = s;
    const anonymous = buildRequestContext({ user: null, siteId: null });
    expect(await answerOf(records().create(anonymous, configId, { a: 1 }))).toEqual({
      status: 401,
      code: 'UNAUTHORIZED',
    });
  });

  it('own records only for a user, everyone’s for a manager, without any route or guard', async () => {
    const { configId } = s;
    const [alice, bob, manager] = s.users;
    const mine = await records().create(contextOf(alice.user), configId, { who: 'alice' });
    const theirs = await records().create(contextOf(bob.user), configId, { who: 'bob' });

    const listed = async (caller: TestUser) =>
      (await records().list(contextOf(caller.user), configId, {})).data.map((r) => r.data.who).sort();
    expect(await listed(alice)).toEqual(['alice']);
    expect(await listed(bob)).toEqual(['bob']);
    expect(await listed(manager)).toEqual(['alice', 'bob']);
    const overHttp = async (caller: TestUser) =>
      (await s.t.request({ method: 'GET', url: `/api/data/${configId}`, token: caller.token }))
        .json()
        .data.map((r: { data: { who: string } }) => r.data.who)
        .sort();
    expect(await overHttp(alice)).toEqual(['alice']);
    expect(await overHttp(manager)).toEqual(['alice', 'bob']);

    // Someone else's record does not exist for a user who may see only their own.
    const expected = { status: 404, code: 'RECORD_NOT_FOUND' };
    expect(await answerOf(records().get(contextOf(alice.user), configId, theirs.dataId))).toEqual(expected);
    expect(await viaHttp('GET', `/api/data/${configId}/${theirs.dataId}`, alice)).toEqual(expected);
    expect(await answerOf(records().get(contextOf(manager.user), configId, mine.dataId))).toEqual({
      status: 200,
    });
  });
});
