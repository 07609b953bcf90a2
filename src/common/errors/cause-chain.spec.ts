import { DrizzleQueryError } from 'drizzle-orm/errors';
import { causeChain } from './cause-chain';

describe('causeChain', () => {
  it('names each wrapped error with its code, up to five deep', () => {
    const inner = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    expect(causeChain(new Error('lookup failed', { cause: inner }))).toBe(
      'lookup failed <- connect ECONNREFUSED 127.0.0.1:5432 [ECONNREFUSED]',
    );
  });

  it("never writes a failed query's statement or its submitted values", () => {
    const driver = Object.assign(new Error('duplicate key value violates unique constraint "users_email"'), {
      code: '23505',
    });
    const failed = new DrizzleQueryError(
      'insert into users (email) values ($1)',
      ['ann@example.com'],
      driver,
    );
    const line = causeChain(new Error('could not save', { cause: failed }));
    expect(line).toBe(
      'could not save <- query failed <- duplicate key value violates unique constraint "users_email" [23505]',
    );
    expect(line).not.toContain('ann@example.com');
    expect(line).not.toContain('insert into');
  });
});
