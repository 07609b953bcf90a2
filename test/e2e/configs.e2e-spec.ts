import { createConfig, ORDER_FORM, storedConfig } from '../factories/config.factory';
import { useAppSuite } from '../utils/app-suite';

describe('configurations', () => {
  const s = useAppSuite({ env: { CACHE_ENABLED: 'true' }, users: 1 });

  it('create answers 201 with defaults filled in; both read paths return it', async () => {
    const response = await s.t.request({
      method: 'POST',
      url: '/api/configs',
      token: s.admin,
      payload: { title: 'Minimal', type: 'tree' },
    });
    expect(response.statusCode).toBe(201);
    const config = response.json();
    expect(config).toEqual(storedConfig({ title: 'Minimal', type: 'tree' }));
    for (const path of ['/api/config/', '/api/configs/']) {
      expect(
        (await s.t.request({ method: 'GET', url: `${path}${config.id}`, token: s.user.token })).json(),
      ).toEqual(config);
    }
  });

  it('lists active configurations as {data:[{id,title,type,tags}], totalCount}, filtered by type and tags', async () => {
    await createConfig(s.t, s.admin, { title: 'A', type: 'form', tags: ['x', 'y'] });
    await createConfig(s.t, s.admin, { title: 'B', type: 'grid', tags: ['x'] });
    const gone = await createConfig(s.t, s.admin, { title: 'C', type: 'form', tags: ['y'] });
    await s.t.request({ method: 'DELETE', url: `/api/configs/${gone}`, token: s.admin });
    const all = (await s.t.request({ method: 'GET', url: '/api/configs', token: s.user.token })).json();
    expect(all.totalCount).toBe(2);
    expect(all.data[0]).toEqual({ id: expect.any(String), title: 'A', type: 'form', tags: ['x', 'y'] });
    const titles = async (query: string) =>
      (await s.t.request({ method: 'GET', url: `/api/configs${query}`, token: s.user.token }))
        .json()
        .data.map((c: any) => c.title);
    expect(await titles('?type=grid')).toEqual(['B']);
    expect(await titles('?tags=x')).toEqual(['A', 'B']);
    expect(await titles('?tags=x,y')).toEqual(['A']);
    expect(
      (await s.t.request({ method: 'GET', url: '/api/configs?type=table', token: s.user.token })).statusCode,
    ).toBe(422);
    const cacheBuster = await s.t.request({
      method: 'GET',
      url: '/api/configs?_=1700000000000',
      token: s.user.token,
    });
    expect(cacheBuster.statusCode).toBe(200);
    expect(
      (await s.t.request({ method: 'GET', url: '/api/configs?unknown=1', token: s.user.token })).statusCode,
    ).toBe(422);
  });

  it('a schema Ajv cannot compile or a rule that is not JSONLogic is a 422', async () => {
    const cases = [
      { schema: { type: 'object', properties: { a: { type: 'no-such-type' } } } },
      { validationRules: [{ name: 'r', rule: { nosuchop: [1, 2] }, message: 'm' }] },
      { validationRules: [{ name: 'r', rule: { '==': [1, 1], '!=': [1, 2] }, message: 'm' }] },
      { validationRules: [{ name: 'r', rule: { var: 'constructor.name' }, message: 'm' }] },
      { computedRules: [{ field: 'x', expression: { throw: 'boom' } }] },
      { computedRules: [{ field: '__proto__', expression: 1 }] },
      { validationRules: [{ name: 'r', field: 'a b', rule: true, message: 'm' }] },
      { preferences: { saveLimit: 0 } },
      { type: 'table' },
    ];
    for (const overrides of cases) {
      const response = await s.t.request({
        method: 'POST',
        url: '/api/configs',
        token: s.admin,
        payload: { ...ORDER_FORM, ...overrides },
      });
      expect({ overrides, status: response.statusCode }).toEqual({ overrides, status: 422 });
      expect(response.json().code).toBe('VALIDATION_FAILED');
    }
    expect(
      (await s.t.request({ method: 'GET', url: '/api/configs', token: s.admin })).json().totalCount,
    ).toBe(0);
  });

  it('update changes only the given fields and invalidates the per-user cache; delete deactivates', async () => {
    const id = await createConfig(s.t, s.admin);
    const read = () => s.t.request({ method: 'GET', url: `/api/config/${id}`, token: s.user.token });
    expect((await read()).json().title).toBe('Order form');
    const updated = await s.t.request({
      method: 'PUT',
      url: `/api/configs/${id}`,
      token: s.admin,
      payload: { title: 'Renamed', preferences: { saveLimit: 3 } },
    });
    expect(updated.statusCode).toBe(200);
    expect(updated.json()).toMatchObject({
      title: 'Renamed',
      type: 'form',
      preferences: { saveLimit: 3, allowEdit: true, storeComputedResults: true },
    });
    expect((await read()).json().title).toBe('Renamed');
    const deleted = await s.t.request({ method: 'DELETE', url: `/api/configs/${id}`, token: s.admin });
    expect(deleted.json()).toMatchObject({ id, isActive: false });
    expect((await read()).statusCode).toBe(404);
    expect(
      (
        await s.t.request({
          method: 'PUT',
          url: `/api/configs/${id}`,
          token: s.admin,
          payload: { title: 'x' },
        })
      ).statusCode,
    ).toBe(404);
  });

  it('keeps the schema exactly as sent, property order included', async () => {
    const schema = {
      type: 'object',
      properties: { zeta: { type: 'string' }, alpha: { type: 'number' }, mid: {} },
    };
    const id = await createConfig(s.t, s.admin, { schema, validationRules: [], computedRules: [] });
    const body = (await s.t.request({ method: 'GET', url: `/api/configs/${id}`, token: s.admin })).json();
    expect(Object.keys(body.schema.properties)).toEqual(['zeta', 'alpha', 'mid']);
  });
});
