import { FormConfigsService } from '../../src/form-configs/form-configs.service';
import { buildRequestContext, type RequestContext } from '../../src/common/context/request-context';
import { AppError } from '../../src/common/errors/app-error';
import type { CreateConfigDto } from '../../src/form-configs/dto/form-config.dto';
import { FormValidator } from '../../src/validation/form-validator.service';
import { ORDER_FORM, createConfig } from '../factories/config.factory';
import { postRecord } from '../utils/api-requests';
import { useAppSuite } from '../utils/app-suite';

/** The attacks of the rule-engine review, through the service layer (no HTTP body pipeline) and through HTTP. */
describe('rule engine hardening', () => {
  const s = useAppSuite({ users: 1 });
  let adminCtx: RequestContext;
  beforeEach(async () => {
    const me = (await s.t.request({ method: 'GET', url: '/auth/me', token: s.admin })).json();
    adminCtx = buildRequestContext({
      user: { userId: me.id, role: 'admin', email: me.email, siteId: null },
      siteId: null,
    });
  });

  const submit = (configId: string, data: object) => postRecord(s.t, s.user.token, configId, data);
  const listAsAdmin = async (url: string) =>
    (await s.t.request({ method: 'GET', url, token: s.admin })).json();

  async function createThroughService(rule: unknown): Promise<AppError> {
    const body = {
      title: 'Attack',
      type: 'form',
      tags: [],
      validationRules: [{ name: 'r', rule, message: 'no' }],
      computedRules: [{ field: 'leak', expression: rule }],
    } as unknown as CreateConfigDto;
    try {
      await s.t.app.get(FormConfigsService).create(adminCtx, body);
    } catch (error) {
      return error as AppError;
    }
    throw new Error('the configuration was stored');
  }

  it.each<[string, unknown]>([
    ['an operator inherited from Object.prototype (constructor)', { constructor: [{ var: 'x' }] }],
    ['__defineGetter__ on the shared methods object', { __defineGetter__: ['evil', { var: 'x' }] }],
    ['hasOwnProperty', { hasOwnProperty: ['x'] }],
    ['an operator spelled as JavaScript source', { "a'](process.env)||this['": [] }],
    ['a second argument of var reaching a prototype', { var: ['x', { var: '__proto__' }] }],
    ['a relative path inside an iterator', { map: [{ var: 'items' }, { var: '../__proto__' }] }],
    ['a rule nested 50,000 levels deep', deep(50_000)],
  ])('refuses %s with a 422 when called without HTTP', async (_, rule) => {
    const error = await createThroughService(rule);
    expect(error).toBeInstanceOf(AppError);
    expect(error.code).toBe('VALIDATION_FAILED');
    expect(error.status).toBe(422);
    expect(error.validationErrors?.[0]).toMatchObject({
      field: 'validationRules[0].rule',
      rule: 'jsonLogic',
    });
    expect((await listAsAdmin('/api/configs')).totalCount).toBe(0);
  });

  it('never lets a rule that slipped past the checker pass or return the environment', () => {
    // A definition stored before this release is evaluated by the interpreter, which knows only the allow-list.
    const outcome = s.t.app.get(FormValidator).validate(
      {
        validationRules: [{ name: 'r', rule: { constructor: [1] }, message: 'no' }],
        computedRules: [{ field: 'env', expression: { __lookupGetter__: ['x'] } }],
      },
      { x: 1 },
      'en',
    );
    expect(outcome.valid).toBe(false);
    expect(outcome.computedResults).toEqual({ env: null });
  });

  it('answers 400 RULE_LIMIT_EXCEEDED for a quadratic rule over a large submitted array, stores nothing', async () => {
    const configId = await createConfig(s.t, s.admin, {
      schema: null,
      validationRules: [
        {
          name: 'unique',
          rule: { all: [{ var: 'items' }, { none: [{ val: [[2], 'items'] }, { '==': [{ var: '' }, 1] }] }] },
          message: 'duplicates',
        },
      ],
      computedRules: [],
    });
    const items = Array.from({ length: 9000 }, (_, i) => i + 2);
    const refused = await submit(configId, { items });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({
      success: false,
      code: 'RULE_LIMIT_EXCEEDED',
      statusCode: 400,
      details: { limit: 'maxWork', value: 200_000 },
    });
    const small = await submit(configId, { items: [2, 3, 4] });
    expect(small.statusCode).toBe(201);
    expect((await listAsAdmin(`/api/data/${configId}`)).total).toBe(1);
  });

  it('answers 400 for an array over the iteration limit and for a doubling reduce', async () => {
    const configId = await createConfig(s.t, s.admin, {
      schema: null,
      validationRules: [],
      computedRules: [
        {
          field: 'count',
          expression: { reduce: [{ var: 'items' }, { '+': [{ var: 'accumulator' }, 1] }, 0] },
        },
        {
          field: 'blowup',
          expression: {
            reduce: [{ var: 'small' }, { merge: [{ var: 'accumulator' }, { var: 'accumulator' }] }, [1]],
          },
        },
      ],
    });
    const tooLong = await submit(configId, { items: Array.from({ length: 20_000 }, () => 1), small: [] });
    expect(tooLong.statusCode).toBe(400);
    expect(tooLong.json()).toMatchObject({
      code: 'RULE_LIMIT_EXCEEDED',
      details: { limit: 'maxArrayLength' },
    });
    const doubling = await submit(configId, { items: [1], small: Array.from({ length: 30 }, () => 1) });
    expect(doubling.statusCode).toBe(400);
    expect(doubling.json().code).toBe('RULE_LIMIT_EXCEEDED');
    const fine = await submit(configId, { items: [1, 1, 1], small: [1, 1] });
    expect(fine.statusCode).toBe(201);
    expect(fine.json().computedResults).toEqual({ count: 3, blowup: [1, 1, 1, 1] });
  });

  it('keeps the ordinary rules of the order form working', async () => {
    const configId = await createConfig(s.t, s.admin);
    const response = await submit(configId, { name: 'A', qty: 101, price: 2 });
    expect(response.statusCode).toBe(400);
    expect(response.json().validationErrors).toEqual([
      { field: 'qty', rule: 'maxQty', message: 'At most 100 pieces' },
    ]);
    expect(ORDER_FORM.validationRules).toHaveLength(1);
  });
});

function deep(depth: number): unknown {
  let node: unknown = { var: 'x' };
  for (let i = 0; i < depth; i++) node = { '!': [node] };
  return node;
}
