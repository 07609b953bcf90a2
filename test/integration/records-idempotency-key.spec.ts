import { buildRequestContext, type RequestContext } from '../../src/common/context/request-context';
import { AppError } from '../../src/common/errors/app-error';
import { RecordsService } from '../../src/data/records.service';
import { createConfig } from '../factories/config.factory';
import { adminToken, createUser, type TestUser } from '../factories/user.factory';
import { useAppSuite } from '../utils/app-suite';
import type { TestApp } from '../utils/test-app';

/**
 * The key a workflow's save step stores its record under (`run:<runId>:<step>`): a step run again
 * after a crash gets the record it saved, decided by the unique key in the insert itself.
 */
describe('record creation with an idempotency key', () => {
  let t: TestApp;
  let records: RecordsService;
  let admin: string;
  let alice: TestUser;
  // A fresh context per call, as every request and run has its own (form access is looked up once per context).
  const ctx = (): RequestContext => {
    const { id, role, email, siteId } = alice.user;
    return buildRequestContext({ user: { userId: id, role, email, siteId }, siteId: null });
  };
  useAppSuite((suite) => ({ t } = suite), { admin: false, seed: 'once' });
  beforeAll(async () => {
    records = t.app.get(RecordsService);
  });
  beforeEach(async () => {
    await t.reset();
    admin = await adminToken(t);
    alice = await createUser(t);
  });

  async function activeCount(configId: string): Promise<number> {
    const response = await t.request({ method: 'GET', url: `/api/data/${configId}`, token: admin });
    return response.json().total;
  }

  it('the same key twice stores one record and answers it both times', async () => {
    const configId = await createConfig(t, admin);
    const first = await records.create(
      ctx(),
      configId,
      { name: 'Ann', qty: 2, price: 3 },
      { idempotencyKey: 'run:a:store' },
    );
    const again = await records.create(
      ctx(),
      configId,
      { name: 'Ann', qty: 2, price: 3 },
      { idempotencyKey: 'run:a:store' },
    );
    expect(again.dataId).toBe(first.dataId);
    expect(again.data).toEqual(first.data);
    expect(again.computedResults).toEqual({ total: 6, bigOrder: false });
    const other = await records.create(
      ctx(),
      configId,
      { name: 'Ann', qty: 2 },
      { idempotencyKey: 'run:b:store' },
    );
    expect(other.dataId).not.toBe(first.dataId);
    expect(await activeCount(configId)).toBe(2);
  });

  it('concurrent creates with one key store one record', async () => {
    const configId = await createConfig(t, admin);
    const saved = await Promise.all(
      Array.from({ length: 5 }, () =>
        records.create(ctx(), configId, { name: 'Ann', qty: 1 }, { idempotencyKey: 'run:c:store' }),
      ),
    );
    expect(new Set(saved.map((s) => s.dataId)).size).toBe(1);
    expect(await activeCount(configId)).toBe(1);
  });

  it('under a save limit, the stored record is answered instead of the limit', async () => {
    const configId = await createConfig(t, admin, {
      preferences: { saveLimit: 1, allowEdit: true, allowDelete: true, storeComputedResults: false },
    });
    const first = await records.create(
      ctx(),
      configId,
      { name: 'Ann', qty: 1 },
      { idempotencyKey: 'run:d:store' },
    );
    const again = await records.create(
      ctx(),
      configId,
      { name: 'Ann', qty: 1 },
      { idempotencyKey: 'run:d:store' },
    );
    expect(again.dataId).toBe(first.dataId);
    const refused = await records
      .create(ctx(), configId, { name: 'Ann', qty: 1 }, { idempotencyKey: 'run:e:store' })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(AppError);
    expect((refused as AppError).code).toBe('DATA_SAVE_LIMIT_REACHED');
    expect(await activeCount(configId)).toBe(1);
  });

  it('a key whose record exists answers it even when the form would now refuse the data', async () => {
    const configId = await createConfig(t, admin);
    const first = await records.create(
      ctx(),
      configId,
      { name: 'Ann', qty: 50 },
      { idempotencyKey: 'run:f:store' },
    );
    const tightened = await t.request({
      method: 'PUT',
      url: `/api/configs/${configId}`,
      token: admin,
      payload: {
        validationRules: [
          {
            name: 'maxQty',
            field: 'qty',
            rule: { '<=': [{ var: 'qty' }, 10] },
            message: { en: 'At most 10' },
          },
        ],
      },
    });
    expect(tightened.statusCode).toBe(200);
    const again = await records.create(
      ctx(),
      configId,
      { name: 'Ann', qty: 50 },
      { idempotencyKey: 'run:f:store' },
    );
    expect(again.dataId).toBe(first.dataId);
    const fresh = await records
      .create(ctx(), configId, { name: 'Ann', qty: 50 }, { idempotencyKey: 'run:g:store' })
      .catch((error: unknown) => error);
    expect((fresh as AppError).code).toBe('DATA_VALIDATION_FAILED');
  });
});
