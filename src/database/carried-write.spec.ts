import { sql } from 'drizzle-orm';
import { CarriedWrite, offeringWrite, takeCarriedWrite } from './carried-write';

describe('CarriedWrite', () => {
  const statement = sql`insert into t values (1)`;

  it('is taken once, by the first insert of the offering context', async () => {
    const write = new CarriedWrite(statement);
    const taken = await offeringWrite(write, async () => {
      await Promise.resolve();
      return [takeCarriedWrite(), takeCarriedWrite()];
    });
    expect(taken).toEqual([statement, null]);
    expect(write.taken).toBe(true);
  });

  it('is not offered outside its context, nor after the offering work ended', async () => {
    const write = new CarriedWrite(statement);
    let late: Promise<unknown> = Promise.resolve();
    await offeringWrite(write, async () => {
      // Work the attempt leaves running (one abandoned at its timeout) keeps the context...
      late = new Promise((resolve) => setTimeout(() => resolve(takeCarriedWrite()), 10));
    });
    expect(takeCarriedWrite()).toBeNull();
    // ...but the offer ended with the attempt.
    expect(await late).toBeNull();
    expect(write.taken).toBe(false);
  });
});
