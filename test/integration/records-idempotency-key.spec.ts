import { AppError } from '../../src/common/errors/app-error';
import { RecordsService } from '../../src/data/records.service';
import { createConfig } from '../factories/config.factory';
import { useAppSuite } from '../utils/app-suite';
import { requestAs } from '../utils/request-as';
import { contextOf } from '../utils/user-context';

/**
 * The key a workflow's save step stores its record under (`run:<runId>:<step>`): a step run again
 * after a crash gets the record it saved, decided by the unique key in the insert itself.
 */
describe('record creation with an idempotency key', () => {
  const s = useAppSuite({ users: 1 });
  /** A create as the user, with a context of its own as every request and run has. */
  const createWithKey = (configId: string, data: object, idempotencyKey: string) =>
    s.t.app.get(RecordsService).create(contextOf(s.user.user), configId, data, { idempotencyKey });

  async function activeCount(configId: string): Promise<number> {
    return (await requestAs(s.t, s.admin, 'GET', `/api/data/${configId}`)).json().total;
  }

  it('the same key twice stores one record and answers it both times', async () => {
    const configId = await createConfig(s.t, s.admin);
    const first = await createWithKey(configId, { name: 'Ann', qty: 2, price: 3 }, 'run:a:store');
    const again = await createWithKey(configId, { name: 'Ann', qty: 2, price: 3 }, 'run:a:store');
    expect(again.dataId).toBe(first.dataId);
    expect(again.data).toEqual(first.data);
    expect(again.computedResults).toEqual({ total: 6, bigOrder: false });
    const other = await createWithKey(configId, { name: 'Ann', qty: 2 }, 'run:b:store');
    expect(other.dataId).not.toBe(first.dataId);
    expect(await activeCount(configId)).toBe(2);
  });

  it('concurrent creates with one key store one record', async () => {
    const configId = await createConfig(s.t, s.admin);
    const saved = await Promise.all(
      Array.from({ length: 5 }, () => createWithKey(configId, { name: 'Ann', qty: 1 }, 'run:c:store')),
    );
    expect(new Set(saved.map((record) => record.dataId)).size).toBe(1);
    expect(await activeCount(configId)).toBe(1);
  });

  it('under a save limit, the stored record is answered instead of the limit', async () => {
    const configId = await createConfig(s.t, s.admin, {
      preferences: { saveLimit: 1, allowEdit: true, allowDelete: true, storeComputedResults: false },
    });
    const first = await createWithKey(configId, { name: 'Ann', qty: 1 }, 'run:d:store');
    const again = await createWithKey(configId, { name: 'Ann', qty: 1 }, 'run:d:store');
    expect(again.dataId).toBe(first.dataId);
    const refused = await createWithKey(configId, { name: 'Ann', qty: 1 }, 'run:e:store').catch(
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(AppError);
    expect((refused as AppError).code).toBe('DATA_SAVE_LIMIT_REACHED');
    expect(await activeCount(configId)).toBe(1);
  });

  it('a key whose record exists answers it even when the form would now refuse the data', async () => {
    const configId = await createConfig(s.t, s.admin);
    const first = await createWithKey(configId, { name: 'Ann', qty: 50 }, 'run:f:store');
    const tightened = await requestAs(s.t, s.admin, 'PUT', `/api/configs/${configId}`, {
      validationRules: [
        { name: 'maxQty', field: 'qty', rule: { '<=': [{ var: 'qty' }, 10] }, message: { en: 'At most 10' } },
      ],
    });
    expect(tightened.statusCode).toBe(200);
    const again = await createWithKey(configId, { name: 'Ann', qty: 50 }, 'run:f:store');
    expect(again.dataId).toBe(first.dataId);
    const fresh = await createWithKey(configId, { name: 'Ann', qty: 50 }, 'run:g:store').catch(
      (error: unknown) => error,
    );
    expect((fresh as AppError).code).toBe('DATA_VALIDATION_FAILED');
  });
});
