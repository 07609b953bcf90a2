import type { LightMyRequestResponse } from 'fastify';
import {
  buildRequestContext,
  type AuthUser,
  type RequestContext,
} from '../../src/common/context/request-context';
import { AppError } from '../../src/common/errors/app-error';
import { RecordsService } from '../../src/data/records.service';
import { adminToken, createUser, type TestUser } from '../factories/user.factory';
import { createConfig } from '../factories/config.factory';
import { useAppSuite } from '../utils/app-suite';
import type { TestApp } from '../utils/test-app';

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

const contextOf = (user: TestUser['user'], siteId: string | null = null): RequestContext =>
  buildRequestContext({
    user: { userId: user.id, role: user.role, email: user.email, siteId: user.siteId } satisfies AuthUser,
    siteId,
  });

/**
 * The record service called the way a workflow run will call it, with a context built outside HTTP:
 * it must give the same 404/403/own-only answers as the routes, which the guard also protects.
 */
describe('the record service outside HTTP', () => {
  let t: TestApp;
  let records: RecordsService;
  let admin: string;
  let alice: TestUser;
  let bob: TestUser;
  let manager: TestUser;
  let configId: string;
  useAppSuite((suite) => ({ t } = suite), { admin: false, seed: 'once' });
  beforeAll(async () => {
    records = t.app.get(RecordsService);
  });
  beforeEach(async () => {
    await t.reset();
    admin = await adminToken(t);
    alice = await createUser(t);
    bob = await createUser(t);
    manager = await createUser(t, { role: 'manager' });
    configId = await createConfig(t, admin, { schema: null, validationRules: [], computedRules: [] });
  });

  const viaHttp = async (method: 'GET' | 'POST', url: string, caller: TestUser, payload?: object) =>
    answerOfResponse(await t.request({ method, url, token: caller.token, payload }));

  it('creates a record and answers in the route shape', async () => {
    const saved = await records.create(contextOf(alice.user), configId, { city: 'Paris' });
    expect(saved).toEqual({
      success: true,
      dataId: expect.any(String),
      data: {
        _id: saved.dataId,
        configId,
        userId: alice.user.id,
        siteId: null,
        data: { city: 'Paris' },
        isActive: true,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
        version: 1,
        configVersion: 1,
      },
      computedResults: {},
    });
  });

  it('404 CONFIG_NOT_FOUND for an unknown, malformed or deactivated configuration, as the route', async () => {
    await t.request({ method: 'DELETE', url: `/api/configs/${configId}`, token: admin });
    for (const id of [ZERO, 'not-a-uuid', configId]) {
      const expected = { status: 404, code: 'CONFIG_NOT_FOUND' };
      expect(await answerOf(records.create(contextOf(alice.user), id, { a: 1 }))).toEqual(expected);
      expect(await viaHttp('POST', `/api/data/${id}`, alice, { a: 1 })).toEqual(expected);
      expect(await answerOf(records.list(contextOf(alice.user), id, {}))).toEqual(expected);
    }
  });

  it("404 for another site's configuration, before the permission check", async () => {
    const site = await t.request({
      method: 'POST',
      url: '/api/sites',
      token: admin,
      payload: { name: 'Shop', domains: ['shop.example.com'] },
    });
    const siteConfig = await createConfig(t, admin, { siteId: site.json().id });
    const expected = { status: 404, code: 'CONFIG_NOT_FOUND' };
    expect(await answerOf(records.create(contextOf(alice.user), siteConfig, { a: 1 }))).toEqual(expected);
    expect(await viaHttp('POST', `/api/data/${siteConfig}`, alice, { a: 1 })).toEqual(expected);
    // On the site's own host it is there.
    expect(
      await answerOf(
        records.create(contextOf(alice.user, site.json().id), siteConfig, { name: 'x', qty: 1 }),
      ),
    ).toEqual({ status: 200 });
  });

  it('403 FORBIDDEN without the form permission, as the route', async () => {
    await t.request({
      method: 'PUT',
      url: `/api/permissions/${configId}`,
      token: admin,
      payload: { roles: { user: ['viewForm', 'viewOwnResults'] } },
    });
    const expected = { status: 403, code: 'FORBIDDEN' };
    expect(await answerOf(records.create(contextOf(alice.user), configId, { a: 1 }))).toEqual(expected);
    expect(await viaHttp('POST', `/api/data/${configId}`, alice, { a: 1 })).toEqual(expected);
    // The manager role has no grant on this configuration any more: not even its list.
    expect(await answerOf(records.list(contextOf(manager.user), configId, {}))).toEqual(expected);
    expect(await viaHttp('GET', `/api/data/${configId}`, manager)).toEqual(expected);
  });

  it('401 UNAUTHORIZED for a context without a user', async () => {
    const anonymous = buildRequestContext({ user: null, siteId: null });
    expect(await answerOf(records.create(anonymous, configId, { a: 1 }))).toEqual({
      status: 401,
      code: 'UNAUTHORIZED',
    });
  });

  it('own records only for a user, everyone’s for a manager, without any route or guard', async () => {
    const mine = await records.create(contextOf(alice.user), configId, { who: 'alice' });
    const theirs = await records.create(contextOf(bob.user), configId, { who: 'bob' });

    const listed = async (caller: TestUser) =>
      (await records.list(contextOf(caller.user), configId, {})).data.map((r) => r.data.who).sort();
    expect(await listed(alice)).toEqual(['alice']);
    expect(await listed(bob)).toEqual(['bob']);
    expect(await listed(manager)).toEqual(['alice', 'bob']);
    const overHttp = async (caller: TestUser) =>
      (await t.request({ method: 'GET', url: `/api/data/${configId}`, token: caller.token }))
        .json()
        .data.map((r: { data: { who: string } }) => r.data.who)
        .sort();
    expect(await overHttp(alice)).toEqual(['alice']);
    expect(await overHttp(manager)).toEqual(['alice', 'bob']);

    // Someone else's record does not exist for a user who may see only their own.
    const expected = { status: 404, code: 'RECORD_NOT_FOUND' };
    expect(await answerOf(records.get(contextOf(alice.user), configId, theirs.dataId))).toEqual(expected);
    expect(await viaHttp('GET', `/api/data/${configId}/${theirs.dataId}`, alice)).toEqual(expected);
    expect(await answerOf(records.get(contextOf(manager.user), configId, mine.dataId))).toEqual({
      status: 200,
    });
  });
});
