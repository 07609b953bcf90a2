import fc from 'fast-check';
import { sql } from 'drizzle-orm';
import { rowsOf } from '../../src/database/raw-rows';
import { cellText } from '../../src/export/export-format';
import { createTestDatabase, type TestDatabase } from '../utils/test-database';

/**
 * PostgreSQL writes CSV cells itself (migration 0005) where the service would write them in
 * JavaScript: both must give the same text for any value that can be stored, read back the way
 * node-postgres (and PGlite) read jsonb.
 */
describe('CSV cell text written by the database', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.close());

  /** The database's cell (both its functions) and the JavaScript one, for `value` stored as `{v: value}`. */
  async function cellsOf(value: unknown): Promise<{ full: string; fast: string; javascript: string }> {
    const record = JSON.stringify({ v: value });
    const [row] = rowsOf(
      await database.client.db.execute(
        sql`select fdws_csv_text(stored.data -> 'v') as full,
                   fdws_csv_cell(stored.text, stored.data, 'v') as fast,
                   stored.data
            from (select ${record}::jsonb as data, ${record}::jsonb ->> 'v' as text offset 0) as stored`,
      ),
    );
    const data = (typeof row.data === 'string' ? JSON.parse(row.data) : row.data) as { v: unknown };
    return {
      full: (row.full as string | null) ?? '',
      fast: (row.fast as string | null) ?? '',
      javascript: cellText(data.v),
    };
  }

  // jsonb refuses the NUL character; everything else can be stored.
  const storable = (text: string) => !text.includes('\u0000');

  it('gives the JavaScript text for any JSON value', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc
          .jsonValue({ maxDepth: 3, stringUnit: 'grapheme' })
          .filter((value) => storable(JSON.stringify(value))),
        async (value) => {
          const cells = await cellsOf(value);
          expect(cells.full).toBe(cells.javascript);
          expect(cells.fast).toBe(cells.javascript);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('gives the JavaScript text for values full of the characters JSON text is made of', async () => {
    // Strings holding quotes, backslashes and ", " / ": " exercise the fast path, which removes the
    // spaces jsonb puts after separators but must leave strings alone; integer-like keys the walk.
    const text = fc.string({
      unit: fc.constantFrom('"', '\\', ',', ':', ' ', '{', '[', ']', 'a', '1', '0', '\n', 'é'),
      maxLength: 8,
    });
    const { value } = fc.letrec((tie) => ({
      value: fc.oneof(
        { maxDepth: 3 },
        text,
        fc.integer(),
        fc.boolean(),
        fc.constant(null),
        fc.array(tie('value'), { maxLength: 4 }),
        fc.dictionary(fc.oneof(text, fc.constantFrom('1', '10', '01')), tie('value'), { maxKeys: 4 }),
      ),
    }));
    await fc.assert(
      fc.asyncProperty(value, async (generated) => {
        const cells = await cellsOf(generated);
        expect(cells.full).toBe(cells.javascript);
        expect(cells.fast).toBe(cells.javascript);
      }),
      { numRuns: 300 },
    );
  });

  it('writes numbers as JavaScript does, with an exponent from 1e21 up and below 1e-6', async () => {
    await fc.assert(
      fc.asyncProperty(fc.double({ noNaN: true, noDefaultInfinity: true }), async (value) => {
        const cells = await cellsOf(value);
        expect(cells.full).toBe(String(Object.is(value, -0) ? 0 : value));
        expect(cells.fast).toBe(cells.full);
      }),
      { numRuns: 300 },
    );
    for (const [value, text] of [
      [1e21, '1e+21'],
      [-1.2345e25, '-1.2345e+25'],
      [999999999999999900000, '999999999999999900000'],
      [1e-7, '1e-7'],
      [-1.5e-7, '-1.5e-7'],
      [0.000001, '0.000001'],
      [5e-324, '5e-324'],
      [Number.MAX_VALUE, '1.7976931348623157e+308'],
    ] as const) {
      expect(await cellsOf(value)).toEqual({ full: text, fast: text, javascript: text });
    }
  });

  it('orders object keys as JavaScript does: integer-like keys first, ascending', async () => {
    const value = {
      b: 1,
      '10': 'ten',
      a: { '4294967295': 'not an index', '4294967294': 'index', '01': 'text' },
      '2': 'two',
    };
    const cells = await cellsOf(value);
    expect(cells.javascript).toBe(
      '{"2":"two","10":"ten","a":{"4294967294":"index","01":"text","4294967295":"not an index"},"b":1}',
    );
    expect(cells.full).toBe(cells.javascript);
    expect(cells.fast).toBe(cells.javascript);
  });
});
