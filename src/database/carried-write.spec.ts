import { sql } from 'drizzle-orm';
import { CarriedWrite } from './carried-write';

describe('CarriedWrite', () => {
  const statement = { template: sql`insert into t values (${sql.placeholder('v')})`, values: { v: 1 } };

  it('is taken once', () => {
    const write = new CarriedWrite(statement);
    expect(write.taken).toBe(false);
    expect([write.take(), write.take()]).toEqual([statement, null]);
    expect(write.taken).toBe(true);
  });

  it('is not taken once closed (an attempt abandoned at its timeout that still runs)', () => {
    const write = new CarriedWrite(statement);
    write.close();
    expect(write.take()).toBeNull();
    expect(write.taken).toBe(false);
  });
});
