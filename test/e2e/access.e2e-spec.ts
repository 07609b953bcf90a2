import { MetadataScanner, ModulesContainer, Reflector } from '@nestjs/core';
import { PATH_METADATA, METHOD_METADATA } from '@nestjs/common/constants';
import { RequestMethod } from '@nestjs/common';
import { AUTH_DECISION } from '../../src/common/auth/auth-decision.decorators';
import { createUser } from '../factories/user.factory';
import { createConfig } from '../factories/config.factory';
import { createRole } from '../factories/role.factory';
import { createSite } from '../factories/site.factory';
import { useAppSuite } from '../utils/app-suite';
import { requestAs, statusAs, type Call } from '../utils/request-as';

const ZERO = '00000000-0000-4000-8000-000000000000';

describe('access control', () => {
  const s = useAppSuite({ users: [{}, { role: 'manager' }] });
  const send = (...call: Call) => requestAs(s.t, ...call);
  const statusOf = (...call: Call) => statusAs(s.t, ...call);
  const codeOf = async (...call: Call) => (await send(...call)).json().code;

  it('every registered route declares an auth decision (public or guarded)', () => {
    const scanner = new MetadataScanner();
    const reflector = s.t.app.get(Reflector);
    const routes: string[] = [];
    const undecided: string[] = [];
    const controllers = [...s.t.app.get(ModulesContainer).values()].flatMap((module) => [
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
    const configId = await createConfig(s.t, s.admin);
    const adminOnly: [Call[1], string, object?][] = [
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
      for (const caller of s.users) {
        const response = await send(caller.token, method, url, payload);
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
    const role = await createRole(s.t, s.admin, 'designer', { configs: ['read', 'create'] });
    // A non-admin writes configurations in their own site only (test/e2e/delegated-authors.e2e-spec.ts).
    const site = await createSite(s.t, s.admin, 'Design', 'design.example.com');
    const onSite = { host: 'design.example.com' };
    const designer = await createUser(s.t, { role: 'designer', siteId: site });
    const config = await send(
      designer.token,
      'POST',
      '/api/configs',
      { title: 'By a designer', type: 'form' },
      onSite,
    );
    expect(config.statusCode).toBe(201);
    const configUrl = `/api/configs/${config.json().id}`;
    expect(await statusOf(designer.token, 'DELETE', configUrl, undefined, onSite)).toBe(403);
    // Granting the action takes effect (the role's permissions are re-read after the change).
    await send(s.admin, 'PUT', `/api/roles/${role}`, {
      permissions: { configs: ['read', 'create', 'delete'] },
    });
    expect(await statusOf(designer.token, 'DELETE', configUrl, undefined, onSite)).toBe(200);
  });

  it('users: admin lists and reads everyone; a user reads only themselves and cannot raise their own role', async () => {
    const [user, manager] = s.users;
    const self = `/api/users/${user.user.id}`;
    const list = (await send(s.admin, 'GET', '/api/users')).json();
    expect(list.totalCount).toBe(3);
    expect(list.data[0]).not.toHaveProperty('passwordHash');
    expect(await statusOf(s.admin, 'GET', '/api/users?page=1e300')).toBe(422);
    expect(await statusOf(s.admin, 'GET', '/api/users?page=9&page=1')).toBe(200);
    expect(await statusOf(user.token, 'GET', self)).toBe(200);
    expect(await statusOf(user.token, 'GET', `/api/users/${manager.user.id}`)).toBe(403);
    expect(await statusOf(user.token, 'PUT', self, { role: 'admin' })).toBe(403);
    expect(await statusOf(user.token, 'PUT', self, { isActive: false })).toBe(403);
    const rename = await send(user.token, 'PUT', self, { name: 'New Name' });
    expect(rename.json()).toMatchObject({ name: 'New Name', role: 'user' });
    const promoted = await send(s.admin, 'PUT', self, { role: 'manager' });
    expect(promoted.json().role).toBe('manager');
    expect((await send(user.token, 'GET', '/auth/me')).json().role).toBe('manager');
    expect(await statusOf(s.admin, 'PUT', self, { role: 'nope' })).toBe(422);
    expect(await statusOf(s.admin, 'PUT', self, { email: 'admin@example.com' })).toBe(409);
  });

  it('the last active admin cannot demote or deactivate themselves', async () => {
    const me = (await send(s.admin, 'GET', '/auth/me')).json();
    const demote = await send(s.admin, 'PUT', `/api/users/${me.id}`, { role: 'user' });
    expect(demote.statusCode).toBe(409);
    expect(demote.json().code).toBe('LAST_ADMIN');
    expect((await send(s.admin, 'GET', '/auth/me')).json().role).toBe('admin');
  });

  it('roles: list, create, update, and the 409s for system roles, roles in use and taken names', async () => {
    const roles = (await send(s.user.token, 'GET', '/api/roles')).json();
    expect(roles.data.map((r: any) => r.name)).toEqual(['admin', 'manager', 'user']);
    const created = await send(s.admin, 'POST', '/api/roles', {
      name: 'auditor',
      description: 'Reads',
      permissions: { stats: ['read'] },
    });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toMatchObject({
      name: 'auditor',
      permissions: { stats: ['read'] },
      isSystem: false,
    });
    for (const [payload, status] of [
      [{ name: 'auditor', permissions: {} }, 409],
      [{ name: 'Bad Name', permissions: {} }, 422],
      [{ name: 'bad', permissions: { x: 'read' } }, 422],
    ] as const) {
      expect({ payload, status: await statusOf(s.admin, 'POST', '/api/roles', payload) }).toEqual({
        payload,
        status,
      });
    }
    const system = `/api/roles/${roles.data.find((r: any) => r.name === 'user').id}`;
    expect(await codeOf(s.admin, 'DELETE', system)).toBe('ROLE_PROTECTED');
    expect(await codeOf(s.admin, 'PUT', system, { name: 'people' })).toBe('ROLE_PROTECTED');
    // The admin role keeps `*` on everything (it may gain a description, or list more).
    const admin = `/api/roles/${roles.data.find((r: any) => r.name === 'admin').id}`;
    for (const permissions of [{}, { configs: ['*'] }, { '*': ['read'] }])
      expect(await codeOf(s.admin, 'PUT', admin, { permissions })).toBe('ROLE_PROTECTED');
    const described = await send(s.admin, 'PUT', admin, {
      description: 'Everything',
      permissions: { '*': ['*'] },
    });
    expect(described.statusCode).toBe(200);
    expect(described.json()).toMatchObject({ name: 'admin', permissions: { '*': ['*'] } });
    expect(await createConfig(s.t, s.admin)).toEqual(expect.any(String));
    const auditor = created.json().id;
    await createUser(s.t, { role: 'auditor' });
    expect(await codeOf(s.admin, 'DELETE', `/api/roles/${auditor}`)).toBe('ROLE_IN_USE');
    const unused = (await send(s.admin, 'POST', '/api/roles', { name: 'temp', permissions: {} })).json().id;
    const deleted = await send(s.admin, 'DELETE', `/api/roles/${unused}`);
    expect(deleted.statusCode).toBe(200);
    expect(deleted.json().name).toBe('temp');
    expect(await statusOf(s.admin, 'DELETE', `/api/roles/${unused}`)).toBe(404);
  });

  it('form permissions: defaults, replacement, the caller’s own set, and enforcement', async () => {
    const [user, manager] = s.users;
    const configId = await createConfig(s.t, s.admin);
    const permissions = `/api/permissions/${configId}`;
    const defaults = (await send(s.admin, 'GET', permissions)).json();
    expect(defaults).toMatchObject({ configId, isDefault: true, users: {} });
    expect(defaults.roles.manager).toEqual(
      expect.arrayContaining(['viewAllResults', 'exportResults', 'viewStats']),
    );
    const mine = (await send(user.token, 'GET', `${permissions}/me`)).json();
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
    expect(await statusOf(user.token, 'GET', `/api/data/${configId}/stats`)).toBe(403);

    expect(await statusOf(s.admin, 'PUT', permissions, { roles: { user: ['fly'] } })).toBe(422);
    expect(await statusOf(s.admin, 'PUT', permissions, { roles: { ghost: ['viewForm'] } })).toBe(422);
    const replaced = await send(s.admin, 'PUT', permissions, {
      roles: { user: ['viewForm', 'viewOwnResults'] },
      users: { [user.user.id]: ['viewStats'] },
    });
    expect(replaced.json()).toEqual({
      configId,
      roles: { user: ['viewForm', 'viewOwnResults'] },
      users: { [user.user.id]: ['viewStats'] },
      isDefault: false,
    });
    expect(await statusOf(user.token, 'GET', `/api/data/${configId}/stats`)).toBe(200);
    expect(await statusOf(user.token, 'POST', `/api/data/${configId}`, { name: 'x', qty: 1 })).toBe(403);
    // The manager role has no grant on this configuration any more.
    expect(await statusOf(manager.token, 'GET', `/api/data/${configId}`)).toBe(403);
    // A JSON null body is refused, not read as `{}` (which would replace every grant with none).
    const nullBody = await s.t.request({
      method: 'PUT',
      url: permissions,
      token: s.admin,
      headers: { 'content-type': 'application/json' },
      payload: 'null',
    });
    expect(nullBody.statusCode).toBe(422);
    expect(nullBody.json()).toMatchObject({
      code: 'VALIDATION_FAILED',
      validationErrors: [{ field: '(body)', rule: 'isObject', message: 'must be a JSON object, not null' }],
    });
    expect((await send(s.admin, 'GET', permissions)).json().users).toEqual({ [user.user.id]: ['viewStats'] });
  });

  it('form permission routes 404 for an unknown configuration before checking permissions', async () => {
    expect(await codeOf(s.user.token, 'GET', `/api/data/${ZERO}`)).toBe('CONFIG_NOT_FOUND');
    expect(await statusOf(s.user.token, 'GET', `/api/data/not-a-uuid/stats`)).toBe(404);
  });
});

describe('sites and tenant isolation by Host', () => {
  const s = useAppSuite({ seed: 'once' });
  const send = (...call: Call) => requestAs(s.t, ...call);
  const statusOf = (...call: Call) => statusAs(s.t, ...call);
  const postSite = (payload: object) => send(s.admin, 'POST', '/api/sites', payload);

  it('sites: unique domains (409), normalized hosts, 404 once deactivated', async () => {
    const created = await postSite({ name: 'Alpha', domains: ['Alpha.Example.com:8080'] });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toMatchObject({ name: 'Alpha', domains: ['alpha.example.com'], isActive: true });
    const clash = await postSite({ name: 'Other', domains: ['alpha.example.com'] });
    expect(clash.statusCode).toBe(409);
    expect(clash.json()).toMatchObject({
      code: 'SITE_DOMAIN_TAKEN',
      error: 'A domain is already used by another site: alpha.example.com',
    });
    expect((await postSite({ name: 'Bad', domains: ['not a host'] })).statusCode).toBe(422);
    const concurrent = await Promise.all(
      [1, 2, 3, 4, 5].map((n) => postSite({ name: `Race ${n}`, domains: ['race.example.com'] })),
    );
    expect(concurrent.map((r) => r.statusCode).sort()).toEqual([201, 409, 409, 409, 409]);
    const url = `/api/sites/${created.json().id}`;
    expect(await statusOf(s.admin, 'GET', url)).toBe(200);
    expect((await send(s.admin, 'PUT', url, { isActive: false })).json().isActive).toBe(false);
    expect(await statusOf(s.admin, 'GET', url)).toBe(404);
    expect((await send(s.admin, 'GET', '/api/sites')).json().data.map((site: any) => site.name)).toEqual(
      ['Race 1', 'Race 2', 'Race 3', 'Race 4', 'Race 5'].filter(
        (name) => concurrent[Number(name.slice(-1)) - 1].statusCode === 201,
      ),
    );
  });

  it('sites: create accepts the isActive the resource exposes (true, or false: created deactivated)', async () => {
    const active = await postSite({ name: 'Gamma', domains: ['gamma.example.com'], isActive: true });
    expect(active.statusCode).toBe(201);
    expect(active.json()).toMatchObject({ name: 'Gamma', domains: ['gamma.example.com'], isActive: true });
    const inactive = await postSite({ name: 'Delta', domains: ['delta.example.com'], isActive: false });
    expect(inactive.statusCode).toBe(201);
    expect(inactive.json()).toMatchObject({ name: 'Delta', domains: ['delta.example.com'], isActive: false });
    expect(await statusOf(s.admin, 'GET', `/api/sites/${inactive.json().id}`)).toBe(404);
    // An inactive site claims no host: an active site may take the domain.
    expect((await postSite({ name: 'Delta 2', domains: ['delta.example.com'] })).statusCode).toBe(201);
    const wrongType = await postSite({ name: 'Epsilon', domains: ['epsilon.example.com'], isActive: 'yes' });
    expect(wrongType.statusCode).toBe(422);
    expect(wrongType.json()).toMatchObject({ code: 'VALIDATION_FAILED', statusCode: 422 });
    expect(wrongType.json().validationErrors).toEqual(
      expect.arrayContaining([expect.objectContaining({ field: 'isActive' })]),
    );
  });

  it('a site’s configurations and records are invisible from other hosts; users registered on a host belong to its site', async () => {
    const site = await createSite(s.t, s.admin, 'Beta', 'beta.example.com');
    const postConfig = async (payload: object) =>
      (await send(s.admin, 'POST', '/api/configs', payload)).json().id;
    const configId = await postConfig({ title: 'Beta form', type: 'form', siteId: site });
    const globalConfig = await postConfig({ title: 'Global form', type: 'form' });

    const onBeta = { host: 'beta.example.com:3000' };
    const elsewhere = { host: 'elsewhere.example.com' };
    const registered = await s.t.request({
      method: 'POST',
      url: '/auth/register',
      headers: onBeta,
      payload: { email: 'b@example.com', password: 'password-123', name: 'B' },
    });
    const betaUser = registered.json().token;
    expect((await send(betaUser, 'GET', '/auth/me', undefined, onBeta)).json().siteId).toBe(site);

    const titles = async (token: string, headers: Record<string, string>) =>
      (await send(token, 'GET', '/api/configs', undefined, headers))
        .json()
        .data.map((c: any) => c.title)
        .sort();
    expect(await titles(betaUser, onBeta)).toEqual(['Beta form', 'Global form']);
    const outsider = (await createUser(s.t)).token;
    expect(await titles(outsider, elsewhere)).toEqual(['Global form']);

    expect(await statusOf(betaUser, 'POST', `/api/data/${configId}`, { a: 1 }, onBeta)).toBe(201);
    expect(await statusOf(outsider, 'GET', `/api/config/${configId}`, undefined, elsewhere)).toBe(404);
    expect(await statusOf(outsider, 'GET', `/api/data/${configId}`, undefined, elsewhere)).toBe(404);
    // A user of a site works only through that site's host.
    expect(await statusOf(betaUser, 'GET', '/api/configs', undefined, elsewhere)).toBe(403);
    // Admins are global.
    expect((await send(s.admin, 'GET', `/api/data/${configId}`)).json().total).toBe(1);
    expect(globalConfig).toBeDefined();
  });
});
