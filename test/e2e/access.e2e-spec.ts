import { MetadataScanner, ModulesContainer, Reflector } from '@nestjs/core';
import { PATH_METADATA, METHOD_METADATA } from '@nestjs/common/constants';
import { RequestMethod } from '@nestjs/common';
import { AUTH_DECISION } from '../../src/common/auth/auth-decision.decorators';
import { adminToken, createUser, type TestUser } from '../factories/user.factory';
import { createConfig } from '../factories/config.factory';
import { useAppSuite } from '../utils/app-suite';
import { createTestApp, type TestApp } from '../utils/test-app';

const ZERO = '00000000-0000-4000-8000-000000000000';

describe('access control', () => {
  let t: TestApp;
  let admin: string;
  let user: TestUser;
  let manager: TestUser;
  useAppSuite(
    (suite) =>
      ({
        t,
        admin,
        users: [user, manager],
      } = suite),
    { users: [{}, { role: 'manager' }] },
  );

  it('every registered route declares an auth decision (public or guarded)', () => {
    const scanner = new MetadataScanner();
    const reflector = t.app.get(Reflector);
    const routes: string[] = [];
    const undecided: string[] = [];
    const controllers = [...t.app.get(ModulesContainer).values()].flatMap((module) => [
      ...module.controllers.values(),
    ]);
    for (const wrapper of controllers) {
      const controller = wrapper.metatype as (new (...args: never[]) => unknown) | undefined;
      if (!controller || !wrapper.instance) continue;
      const prototype = Object.getPrototypeOf(wrapper.instance) as object;
      for (const name of scanner.getAllMethodNames(prototype)) {
        const handler = (prototype as Record<string, unknown>)[name] as () => unknown;
        if (Reflect.getMetadata(PATH_METADATA, handler) === undefined) continue;
        const method = RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as number];
        const route = `${method} ${String(Reflect.getMetadata(PATH_METADATA, controller))}/${String(Reflect.getMetadata(PATH_METADATA, handler))}`;
        routes.push(route);
        if (reflector.getAllAndOverride(AUTH_DECISION, [handler, controller]) === undefined)
          undecided.push(route);
      }
    }
    expect(routes.length).toBeGreaterThan(30);
    expect(routes).toEqual(
      expect.arrayContaining(['POST auth,api/auth/login', 'GET api/data/:configId/stats']),
    );
    expect(undecided).toEqual([]);
  });

  it('every admin-only route answers 403 to user and manager', async () => {
    const configId = await createConfig(t, admin);
    const adminOnly: [string, string, object?][] = [
      ['GET', '/api/users'],
      ['POST', '/api/roles', { name: 'auditor', permissions: {} }],
      ['PUT', `/api/roles/${ZERO}`, { description: 'x' }],
      ['DELETE', `/api/roles/${ZERO}`],
      ['POST', '/api/sites', { name: 'S', domains: ['s.example.com'] }],
      ['PUT', `/api/sites/${ZERO}`, { name: 'x' }],
      ['POST', '/api/configs', { title: 'x', type: 'form' }],
      ['PUT', `/api/configs/${configId}`, { title: 'x' }],
      ['DELETE', `/api/configs/${configId}`],
      ['GET', `/api/permissions/${configId}`],
      ['PUT', `/api/permissions/${configId}`, { roles: {} }],
    ];
    for (const [method, url, payload] of adminOnly) {
      for (const caller of [user, manager]) {
        const response = await t.request({ method: method as 'GET', url, token: caller.token, payload });
        expect({ method, url, role: caller.user.role, status: response.statusCode }).toEqual({
          method,
          url,
          role: caller.user.role,
          status: 403,
        });
        expect(response.json()).toEqual({
          success: false,
          code: 'FORBIDDEN',
          statusCode: 403,
          error: 'You are not authorized to do this.',
        });
      }
    }
  });

  it('configuration writes check the role permission map: a custom role granted configs:create may create, not delete', async () => {
    const created = await t.request({
      method: 'POST',
      url: '/api/roles',
      token: admin,
      payload: { name: 'designer', permissions: { configs: ['read', 'create'] } },
    });
    expect(created.statusCode).toBe(201);
    // A non-admin writes configurations in their own site only (test/e2e/delegated-authors.e2e-spec.ts).
    const site = await t.request({
      method: 'POST',
      url: '/api/sites',
      token: admin,
      payload: { name: 'Design', domains: ['design.example.com'] },
    });
    const onSite = { host: 'design.example.com' };
    const designer = await createUser(t, { role: 'designer', siteId: site.json().id });
    const config = await t.request({
      method: 'POST',
      url: '/api/configs',
      token: designer.token,
      headers: onSite,
      payload: { title: 'By a designer', type: 'form' },
    });
    expect(config.statusCode).toBe(201);
    const removal = await t.request({
      method: 'DELETE',
      url: `/api/configs/${config.json().id}`,
      token: designer.token,
      headers: onSite,
    });
    expect(removal.statusCode).toBe(403);
    // Granting the action takes effect (the role's permissions are re-read after the change).
    await t.request({
      method: 'PUT',
      url: `/api/roles/${created.json().id}`,
      token: admin,
      payload: { permissions: { configs: ['read', 'create', 'delete'] } },
    });
    expect(
      (
        await t.request({
          method: 'DELETE',
          url: `/api/configs/${config.json().id}`,
          token: designer.token,
          headers: onSite,
        })
      ).statusCode,
    ).toBe(200);
  });

  it('users: admin lists and reads everyone; a user reads only themselves and cannot raise their own role', async () => {
    const list = (await t.request({ method: 'GET', url: '/api/users', token: admin })).json();
    expect(list.totalCount).toBe(3);
    expect(list.data[0]).not.toHaveProperty('passwordHash');
    expect(
      (await t.request({ method: 'GET', url: `/api/users/${user.user.id}`, token: user.token })).statusCode,
    ).toBe(200);
    expect(
      (await t.request({ method: 'GET', url: `/api/users/${manager.user.id}`, token: user.token }))
        .statusCode,
    ).toBe(403);
    const raise = await t.request({
      method: 'PUT',
      url: `/api/users/${user.user.id}`,
      token: user.token,
      payload: { role: 'admin' },
    });
    expect(raise.statusCode).toBe(403);
    const activity = await t.request({
      method: 'PUT',
      url: `/api/users/${user.user.id}`,
      token: user.token,
      payload: { isActive: false },
    });
    expect(activity.statusCode).toBe(403);
    const rename = await t.request({
      method: 'PUT',
      url: `/api/users/${user.user.id}`,
      token: user.token,
      payload: { name: 'New Name' },
    });
    expect(rename.json()).toMatchObject({ name: 'New Name', role: 'user' });
    const promoted = await t.request({
      method: 'PUT',
      url: `/api/users/${user.user.id}`,
      token: admin,
      payload: { role: 'manager' },
    });
    expect(promoted.json().role).toBe('manager');
    expect((await t.request({ method: 'GET', url: '/auth/me', token: user.token })).json().role).toBe(
      'manager',
    );
    expect(
      (
        await t.request({
          method: 'PUT',
          url: `/api/users/${user.user.id}`,
          token: admin,
          payload: { role: 'nope' },
        })
      ).statusCode,
    ).toBe(422);
    expect(
      (
        await t.request({
          method: 'PUT',
          url: `/api/users/${user.user.id}`,
          token: admin,
          payload: { email: 'admin@example.com' },
        })
      ).statusCode,
    ).toBe(409);
  });

  it('the last active admin cannot demote or deactivate themselves', async () => {
    const me = (await t.request({ method: 'GET', url: '/auth/me', token: admin })).json();
    const demote = await t.request({
      method: 'PUT',
      url: `/api/users/${me.id}`,
      token: admin,
      payload: { role: 'user' },
    });
    expect(demote.statusCode).toBe(409);
    expect(demote.json().code).toBe('LAST_ADMIN');
    expect((await t.request({ method: 'GET', url: '/auth/me', token: admin })).json().role).toBe('admin');
  });

  it('roles: list, create, update, and the 409s for system roles, roles in use and taken names', async () => {
    const roles = (await t.request({ method: 'GET', url: '/api/roles', token: user.token })).json();
    expect(roles.data.map((r: any) => r.name)).toEqual(['admin', 'manager', 'user']);
    const created = await t.request({
      method: 'POST',
      url: '/api/roles',
      token: admin,
      payload: { name: 'auditor', description: 'Reads', permissions: { stats: ['read'] } },
    });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toMatchObject({
      name: 'auditor',
      permissions: { stats: ['read'] },
      isSystem: false,
    });
    expect(
      (
        await t.request({
          method: 'POST',
          url: '/api/roles',
          token: admin,
          payload: { name: 'auditor', permissions: {} },
        })
      ).statusCode,
    ).toBe(409);
    expect(
      (
        await t.request({
          method: 'POST',
          url: '/api/roles',
          token: admin,
          payload: { name: 'Bad Name', permissions: {} },
        })
      ).statusCode,
    ).toBe(422);
    expect(
      (
        await t.request({
          method: 'POST',
          url: '/api/roles',
          token: admin,
          payload: { name: 'bad', permissions: { x: 'read' } },
        })
      ).statusCode,
    ).toBe(422);
    const system = roles.data.find((r: any) => r.name === 'user');
    expect(
      (await t.request({ method: 'DELETE', url: `/api/roles/${system.id}`, token: admin })).json().code,
    ).toBe('ROLE_PROTECTED');
    expect(
      (
        await t.request({
          method: 'PUT',
          url: `/api/roles/${system.id}`,
          token: admin,
          payload: { name: 'people' },
        })
      ).json().code,
    ).toBe('ROLE_PROTECTED');
    const auditor = created.json().id;
    await createUser(t, { role: 'auditor' });
    expect(
      (await t.request({ method: 'DELETE', url: `/api/roles/${auditor}`, token: admin })).json().code,
    ).toBe('ROLE_IN_USE');
    const unused = (
      await t.request({
        method: 'POST',
        url: '/api/roles',
        token: admin,
        payload: { name: 'temp', permissions: {} },
      })
    ).json().id;
    const deleted = await t.request({ method: 'DELETE', url: `/api/roles/${unused}`, token: admin });
    expect(deleted.statusCode).toBe(200);
    expect(deleted.json().name).toBe('temp');
    expect(
      (await t.request({ method: 'DELETE', url: `/api/roles/${unused}`, token: admin })).statusCode,
    ).toBe(404);
  });

  it('form permissions: defaults, replacement, the caller’s own set, and enforcement', async () => {
    const configId = await createConfig(t, admin);
    const defaults = (
      await t.request({ method: 'GET', url: `/api/permissions/${configId}`, token: admin })
    ).json();
    expect(defaults).toMatchObject({ configId, isDefault: true, users: {} });
    expect(defaults.roles.manager).toEqual(
      expect.arrayContaining(['viewAllResults', 'exportResults', 'viewStats']),
    );
    const mine = (
      await t.request({ method: 'GET', url: `/api/permissions/${configId}/me`, token: user.token })
    ).json();
    expect(mine).toEqual({
      configId,
      permissions: [
        'viewForm',
        'createResults',
        'viewOwnResults',
        'editOwnResults',
        'deleteOwnResults',
        'executeWorkflows',
      ],
    });
    expect(
      (await t.request({ method: 'GET', url: `/api/data/${configId}/stats`, token: user.token })).statusCode,
    ).toBe(403);

    const bad = await t.request({
      method: 'PUT',
      url: `/api/permissions/${configId}`,
      token: admin,
      payload: { roles: { user: ['fly'] } },
    });
    expect(bad.statusCode).toBe(422);
    const unknownRole = await t.request({
      method: 'PUT',
      url: `/api/permissions/${configId}`,
      token: admin,
      payload: { roles: { ghost: ['viewForm'] } },
    });
    expect(unknownRole.statusCode).toBe(422);
    const replaced = await t.request({
      method: 'PUT',
      url: `/api/permissions/${configId}`,
      token: admin,
      payload: { roles: { user: ['viewForm', 'viewOwnResults'] }, users: { [user.user.id]: ['viewStats'] } },
    });
    expect(replaced.json()).toEqual({
      configId,
      roles: { user: ['viewForm', 'viewOwnResults'] },
      users: { [user.user.id]: ['viewStats'] },
      isDefault: false,
    });
    expect(
      (await t.request({ method: 'GET', url: `/api/data/${configId}/stats`, token: user.token })).statusCode,
    ).toBe(200);
    const create = await t.request({
      method: 'POST',
      url: `/api/data/${configId}`,
      token: user.token,
      payload: { name: 'x', qty: 1 },
    });
    expect(create.statusCode).toBe(403);
    // The manager role has no grant on this configuration any more.
    expect(
      (await t.request({ method: 'GET', url: `/api/data/${configId}`, token: manager.token })).statusCode,
    ).toBe(403);
  });

  it('form permission routes 404 for an unknown configuration before checking permissions', async () => {
    expect(
      (await t.request({ method: 'GET', url: `/api/data/${ZERO}`, token: user.token })).json().code,
    ).toBe('CONFIG_NOT_FOUND');
    expect(
      (await t.request({ method: 'GET', url: `/api/data/not-a-uuid/stats`, token: user.token })).statusCode,
    ).toBe(404);
  });
});

describe('sites and tenant isolation by Host', () => {
  let t: TestApp;
  let admin: string;
  beforeAll(async () => {
    t = await createTestApp();
    admin = await adminToken(t);
  });
  afterAll(() => t.close());

  it('sites: unique domains (409), normalized hosts, 404 once deactivated', async () => {
    const created = await t.request({
      method: 'POST',
      url: '/api/sites',
      token: admin,
      payload: { name: 'Alpha', domains: ['Alpha.Example.com:8080'] },
    });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toMatchObject({ name: 'Alpha', domains: ['alpha.example.com'], isActive: true });
    const clash = await t.request({
      method: 'POST',
      url: '/api/sites',
      token: admin,
      payload: { name: 'Other', domains: ['alpha.example.com'] },
    });
    expect(clash.statusCode).toBe(409);
    expect(clash.json()).toMatchObject({
      code: 'SITE_DOMAIN_TAKEN',
      error: 'A domain is already used by another site: alpha.example.com',
    });
    expect(
      (
        await t.request({
          method: 'POST',
          url: '/api/sites',
          token: admin,
          payload: { name: 'Bad', domains: ['not a host'] },
        })
      ).statusCode,
    ).toBe(422);
    const concurrent = await Promise.all(
      [1, 2, 3, 4, 5].map((n) =>
        t.request({
          method: 'POST',
          url: '/api/sites',
          token: admin,
          payload: { name: `Race ${n}`, domains: ['race.example.com'] },
        }),
      ),
    );
    expect(concurrent.map((r) => r.statusCode).sort()).toEqual([201, 409, 409, 409, 409]);
    const id = created.json().id;
    expect((await t.request({ method: 'GET', url: `/api/sites/${id}`, token: admin })).statusCode).toBe(200);
    expect(
      (
        await t.request({
          method: 'PUT',
          url: `/api/sites/${id}`,
          token: admin,
          payload: { isActive: false },
        })
      ).json().isActive,
    ).toBe(false);
    expect((await t.request({ method: 'GET', url: `/api/sites/${id}`, token: admin })).statusCode).toBe(404);
    expect(
      (await t.request({ method: 'GET', url: '/api/sites', token: admin }))
        .json()
        .data.map((s: any) => s.name),
    ).toEqual(
      ['Race 1', 'Race 2', 'Race 3', 'Race 4', 'Race 5'].filter(
        (name) => concurrent[Number(name.slice(-1)) - 1].statusCode === 201,
      ),
    );
  });

  it('sites: create accepts the isActive the resource exposes (true, or false: created deactivated)', async () => {
    const active = await t.request({
      method: 'POST',
      url: '/api/sites',
      token: admin,
      payload: { name: 'Gamma', domains: ['gamma.example.com'], isActive: true },
    });
    expect(active.statusCode).toBe(201);
    expect(active.json()).toMatchObject({ name: 'Gamma', domains: ['gamma.example.com'], isActive: true });
    const inactive = await t.request({
      method: 'POST',
      url: '/api/sites',
      token: admin,
      payload: { name: 'Delta', domains: ['delta.example.com'], isActive: false },
    });
    expect(inactive.statusCode).toBe(201);
    expect(inactive.json()).toMatchObject({ name: 'Delta', domains: ['delta.example.com'], isActive: false });
    expect(
      (await t.request({ method: 'GET', url: `/api/sites/${inactive.json().id}`, token: admin })).statusCode,
    ).toBe(404);
    // An inactive site claims no host: an active site may take the domain.
    const taker = await t.request({
      method: 'POST',
      url: '/api/sites',
      token: admin,
      payload: { name: 'Delta 2', domains: ['delta.example.com'] },
    });
    expect(taker.statusCode).toBe(201);
    const wrongType = await t.request({
      method: 'POST',
      url: '/api/sites',
      token: admin,
      payload: { name: 'Epsilon', domains: ['epsilon.example.com'], isActive: 'yes' },
    });
    expect(wrongType.statusCode).toBe(422);
    expect(wrongType.json()).toMatchObject({ code: 'VALIDATION_FAILED', statusCode: 422 });
    expect(wrongType.json().validationErrors).toEqual(
      expect.arrayContaining([expect.objectContaining({ field: 'isActive' })]),
    );
  });

  it('a site’s configurations and records are invisible from other hosts; users registered on a host belong to its site', async () => {
    const site = (
      await t.request({
        method: 'POST',
        url: '/api/sites',
        token: admin,
        payload: { name: 'Beta', domains: ['beta.example.com'] },
      })
    ).json();
    const configId = (
      await t.request({
        method: 'POST',
        url: '/api/configs',
        token: admin,
        payload: { title: 'Beta form', type: 'form', siteId: site.id },
      })
    ).json().id;
    const globalConfig = (
      await t.request({
        method: 'POST',
        url: '/api/configs',
        token: admin,
        payload: { title: 'Global form', type: 'form' },
      })
    ).json().id;

    const onBeta = { host: 'beta.example.com:3000' };
    const registered = await t.request({
      method: 'POST',
      url: '/auth/register',
      headers: onBeta,
      payload: { email: 'b@example.com', password: 'password-123', name: 'B' },
    });
    const betaUser = registered.json().token;
    expect(
      (await t.request({ method: 'GET', url: '/auth/me', token: betaUser, headers: onBeta })).json().siteId,
    ).toBe(site.id);

    const titles = async (token: string, headers: Record<string, string>) =>
      (await t.request({ method: 'GET', url: '/api/configs', token, headers }))
        .json()
        .data.map((c: any) => c.title)
        .sort();
    expect(await titles(betaUser, onBeta)).toEqual(['Beta form', 'Global form']);
    const outsider = (await createUser(t)).token;
    expect(await titles(outsider, { host: 'elsewhere.example.com' })).toEqual(['Global form']);

    expect(
      (
        await t.request({
          method: 'POST',
          url: `/api/data/${configId}`,
          token: betaUser,
          headers: onBeta,
          payload: { a: 1 },
        })
      ).statusCode,
    ).toBe(201);
    expect(
      (
        await t.request({
          method: 'GET',
          url: `/api/config/${configId}`,
          token: outsider,
          headers: { host: 'elsewhere.example.com' },
        })
      ).statusCode,
    ).toBe(404);
    expect(
      (
        await t.request({
          method: 'GET',
          url: `/api/data/${configId}`,
          token: outsider,
          headers: { host: 'elsewhere.example.com' },
        })
      ).statusCode,
    ).toBe(404);
    // A user of a site works only through that site's host.
    expect(
      (
        await t.request({
          method: 'GET',
          url: '/api/configs',
          token: betaUser,
          headers: { host: 'elsewhere.example.com' },
        })
      ).statusCode,
    ).toBe(403);
    // Admins are global.
    expect(
      (await t.request({ method: 'GET', url: `/api/data/${configId}`, token: admin })).json().total,
    ).toBe(1);
    expect(globalConfig).toBeDefined();
  });
});
