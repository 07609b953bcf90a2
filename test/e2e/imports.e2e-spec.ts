import { Readable } from 'node:stream';
import { crc32, deflateRawSync } from 'node:zlib';
import { sql } from 'drizzle-orm';
import { rowsOf } from '../../src/database/raw-rows';
import { ImportProcessor } from '../../src/imports/import-processor';
import { ImportRetention } from '../../src/imports/import-retention';
import { createConfig } from '../factories/config.factory';
import { createSite } from '../factories/site.factory';
import { createUser } from '../factories/user.factory';
import { postRecord } from '../utils/api-requests';
import { useAppSuite } from '../utils/app-suite';
import { domainEventsWritten } from '../utils/domain-events';
import { replaceFormPermissions } from '../utils/workflow-api';

/** A form with every kind of field the export writes: text, numbers, booleans, dates, arrays, objects. */
const RICH_FORM = {
  title: 'Rich form',
  schema: {
    type: 'object',
    required: ['name', 'qty'],
    additionalProperties: false,
    properties: {
      name: { type: 'string', minLength: 1 },
      qty: { type: 'integer', minimum: 1 },
      price: { type: 'number' },
      paid: { type: 'boolean' },
      due: { type: 'string', format: 'date' },
      seenAt: { type: 'string', format: 'date-time' },
      tags: { type: 'array', items: { type: 'string' } },
      address: {
        type: 'object',
        properties: { city: { type: 'string' }, zip: { type: 'string' }, geo: { type: 'array' } },
      },
      id: { type: 'string' },
      formula: { type: 'string' },
      note: { type: 'string' },
    },
  },
  validationRules: [
    { name: 'maxQty', field: 'qty', rule: { '<=': [{ var: 'qty' }, 100] }, message: 'At most 100' },
  ],
  computedRules: [{ field: 'total', expression: { '*': [{ var: 'qty' }, { var: 'price' }] } }],
};

const RECORDS = [
  {
    name: 'Jane, "J" Doe',
    qty: 3,
    price: 9.5,
    paid: true,
    due: '2026-12-01',
    seenAt: '2026-11-24T10:00:00.000Z',
    tags: ['a, b', 'c'],
    address: { city: 'Paris', zip: '75001', geo: [2.35, 48.85] },
    id: 'external-7',
    formula: '=1+2',
    note: 'two\nlines',
  },
  {
    name: 'Árvíztűrő 😀',
    qty: 100,
    price: -0.5,
    paid: false,
    due: '2027-01-31',
    seenAt: '2026-01-02T03:04:05.678Z',
    tags: [],
    address: { city: 'Budapest', zip: '-1' },
    id: '42',
    formula: '-3',
    note: '  spaced  ',
  },
  { name: 'Minimal', qty: 1 },
];

describe('bulk import', () => {
  // Interests are declared by the test itself (below): no reconciliation may drop them meanwhile.
  // Batches of 2 rows: every file here is staged and stored in several.
  // The user (Alice) imports once she is granted importResults.
  // A workbook that stalls fails after 3 s here (IMPORT_STALL_MS), not 15.
  const s = useAppSuite({
    env: { EVENTS_POLL_MS: '600000', IMPORT_BATCH_ROWS: '2', IMPORT_STALL_MS: '3000' },
    users: 1,
  });

  const newForm = () => createConfig(s.t, s.admin, RICH_FORM);
  const upload = (
    configId: string,
    payload: string | Buffer | object,
    contentType: string,
    options: {
      token?: string;
      query?: Record<string, string | string[]>;
      headers?: Record<string, string>;
    } = {},
  ) =>
    s.t.request({
      method: 'POST',
      url: `/api/data/${configId}/import`,
      token: options.token ?? s.admin,
      query: options.query,
      headers: { 'content-type': contentType, ...(options.headers ?? {}) },
      payload: typeof payload === 'string' || Buffer.isBuffer(payload) ? payload : JSON.stringify(payload),
    });
  const readImport = (id: string, token?: string) =>
    s.t.request({ method: 'GET', url: `/api/data/imports/${id}`, token });
  /** The import once it stopped moving (receiving, storing); no timing is asserted. */
  const finished = async (id: string, token = s.admin) => {
    for (;;) {
      const response = await readImport(id, token);
      expect(response.statusCode).toBe(200);
      const body = response.json();
      if (body.status !== 'receiving' && body.status !== 'storing') return body;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  const accepted = async (response: Awaited<ReturnType<typeof upload>>) => {
    expect(response.statusCode).toBe(202);
    const body = response.json();
    expect(response.headers.location).toBe(`/api/data/imports/${body.id}`);
    return finished(body.id);
  };
  const submit = async (configId: string, data: object) => {
    expect((await postRecord(s.t, s.admin, configId, data)).statusCode).toBe(201);
  };
  const exported = async (configId: string, format: string) =>
    s.t.request({ method: 'GET', url: `/api/data/${configId}/export?format=${format}`, token: s.admin });
  /** The records' data and computed values, in a stable order. */
  const stored = async (configId: string) => {
    const response = await s.t.request({
      method: 'GET',
      url: `/api/data/${configId}?limit=1000&sortBy=name&sortOrder=asc`,
      token: s.admin,
    });
    expect(response.statusCode).toBe(200);
    return (response.json().data as { data: object; computedResults: object; userId: string }[]).map((r) => ({
      data: r.data,
      computedResults: r.computedResults,
    }));
  };

  it('re-imports an export (CSV, XLSX, JSON) into an empty copy of the form unchanged', async () => {
    const source = await newForm();
    for (const record of RECORDS) await submit(source, record);
    const expected = await stored(source);
    expect(expected).toHaveLength(3);

    const csv = await exported(source, 'csv');
    const xlsx = await exported(source, 'excel');
    const json = await exported(source, 'json');
    const files: [string, string | Buffer][] = [
      ['text/csv', csv.body],
      ['application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', xlsx.rawPayload],
      [
        'application/x-ndjson',
        json
          .json<object[]>()
          .map((record) => JSON.stringify(record))
          .join('\n'),
      ],
      ['application/json', json.body],
    ];
    for (const [type, file] of files) {
      const copy = await newForm();
      const result = await accepted(await upload(copy, file, type, { query: { mode: 'all-or-nothing' } }));
      expect({ type, status: result.status, refusals: result.refusals }).toEqual({
        type,
        status: 'done',
        refusals: [],
      });
      expect(result).toMatchObject({ rowsRead: 3, rowsStored: 3, rowsRefused: 0 });
      expect({ type, records: await stored(copy) }).toEqual({ type, records: expected });
    }
  });

  it('valid-rows stores exactly the valid rows and reports the others', async () => {
    const form = await newForm();
    const file = [
      'name,qty,price,paid,tags',
      'Ann,1,1.5,true,"[""x""]"',
      'Bob,two,1,false,[]',
      'Cid,3,,,',
      ',4,1,true,[]',
      'Dan,500,1,TRUE,[]',
    ].join('\n');
    // A media type's parameters are its own business: CSV is CSV.
    const result = await accepted(await upload(form, file, 'text/csv; charset=utf-8'));
    expect(result).toMatchObject({
      status: 'done',
      mode: 'valid-rows',
      format: 'csv',
      rowsRead: 5,
      rowsStored: 2,
      rowsRefused: 3,
    });
    expect(result.refusals).toEqual([
      { row: 2, field: 'qty', rule: 'type', message: expect.any(String) },
      // A rule sees the text "two" too, as a create's rules see a submitted value.
      { row: 2, field: 'qty', rule: 'maxQty', message: 'At most 100' },
      // An empty cell is an absent field.
      { row: 4, field: 'name', rule: 'required', message: 'must have required property name' },
      { row: 5, field: 'qty', rule: 'maxQty', message: 'At most 100' },
    ]);
    expect(await stored(form)).toEqual([
      { data: { name: 'Ann', qty: 1, price: 1.5, paid: true, tags: ['x'] }, computedResults: { total: 1.5 } },
      { data: { name: 'Cid', qty: 3 }, computedResults: { total: 0 } },
    ]);
    const csv = await s.t.request({
      method: 'GET',
      url: `/api/data/imports/${result.id}/refusals`,
      token: s.admin,
    });
    expect(csv.statusCode).toBe(200);
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    expect(csv.body.split('\n')[0]).toBe('row,field,rule,message');
    expect(
      csv.body
        .split('\n')
        .slice(1, 5)
        .map((line) => line.split(',').slice(0, 3).join(',')),
    ).toEqual(['2,qty,type', '2,qty,maxQty', '4,name,required', '5,qty,maxQty']);
    // Each stored record has its `created` history entry with the import as its origin.
    const history = rowsOf(
      await s.t.database.client.db.execute(
        sql`select action, origin from record_history where config_id = ${form}::uuid order by id`,
      ),
    );
    expect(history).toEqual([
      { action: 'created', origin: { kind: 'import', importId: result.id } },
      { action: 'created', origin: { kind: 'import', importId: result.id } },
    ]);
  });

  it("imported records carry the form's version their rows were checked against (configVersion)", async () => {
    const form = await newForm();
    const edited = await s.t.request({
      method: 'PUT',
      url: `/api/configs/${form}`,
      token: s.admin,
      payload: { ...RICH_FORM, title: 'Renamed' },
    });
    expect([edited.statusCode, edited.json().version]).toEqual([200, 2]);
    const result = await accepted(await upload(form, 'name,qty\nAnn,1', 'text/csv'));
    expect(result).toMatchObject({ status: 'done', rowsStored: 1 });
    const list = await s.t.request({ method: 'GET', url: `/api/data/${form}`, token: s.admin });
    const [record] = list.json().data as { _id: string; configVersion: number }[];
    expect(record.configVersion).toBe(2);
    const history = await s.t.request({
      method: 'GET',
      url: `/api/data/${form}/${record._id}/history`,
      token: s.admin,
    });
    expect(history.json().data).toEqual([
      expect.objectContaining({
        action: 'created',
        configVersion: 2,
        origin: { kind: 'import', importId: result.id },
      }),
    ]);
  });

  it('all-or-nothing stores nothing when one row is refused; validate stores nothing at all', async () => {
    const form = await newForm();
    const file = 'name,qty\nAnn,1\nBob,0\nCid,2';
    const refused = await accepted(
      await upload(form, file, 'text/csv', { query: { mode: 'all-or-nothing' } }),
    );
    expect(refused).toMatchObject({ status: 'refused', rowsRead: 3, rowsStored: 0, rowsRefused: 1 });
    expect(refused.refusals).toEqual([
      { row: 2, field: 'qty', rule: 'minimum', message: expect.any(String) },
    ]);
    // `mode` given twice: the last value counts (all-or-nothing would store the valid row).
    const checked = await accepted(
      await upload(form, 'name,qty\nAnn,1', 'text/csv', { query: { mode: ['all-or-nothing', 'validate'] } }),
    );
    expect(checked).toMatchObject({ status: 'done', rowsRead: 1, rowsStored: 0, rowsRefused: 0 });
    expect(await stored(form)).toEqual([]);
    const staged = rowsOf(
      await s.t.database.client.db.execute(
        sql`select count(*)::int as n from data_import_rows where data is not null`,
      ),
    );
    expect(staged).toEqual([{ n: 0 }]);
  });

  it('a repeated upload with the same Idempotency-Key imports once', async () => {
    const form = await newForm();
    const headers = { 'idempotency-key': 'upload-1' };
    const first = await upload(form, 'name,qty\nAnn,1\nBob,2', 'text/csv', { headers });
    const done = await accepted(first);
    const again = await upload(form, 'name,qty\nAnn,1\nBob,2', 'text/csv', { headers });
    expect(again.statusCode).toBe(202);
    expect(again.json()).toMatchObject({ id: done.id, rowsStored: 2 });
    expect(await stored(form)).toHaveLength(2);
    // Another key is another import.
    await accepted(
      await upload(form, 'name,qty\nCid,1', 'text/csv', { headers: { 'idempotency-key': 'upload-2' } }),
    );
    expect(await stored(form)).toHaveLength(3);
  });

  it('valid-rows keeps the rows stored before an upload stopped; the same key goes on after them', async () => {
    const form = await newForm();
    const headers = { 'idempotency-key': 'upload-3' };
    // The connection breaks once rows 1-2 (one batch) are stored; row 3 was read, not stored.
    const body = new Readable({ read: () => undefined });
    body.push('name,qty\nAnn,1\nBob,2\nCid,3\n');
    const cut = s.t.request({
      method: 'POST',
      url: `/api/data/${form}/import`,
      token: s.admin,
      headers: { 'content-type': 'text/csv', ...headers },
      payload: body,
    });
    for (;;) {
      const [row] = rowsOf(await s.t.database.client.db.execute(sql`select rows_stored from data_imports`));
      if (row?.rows_stored === 2) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    body.destroy(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }));
    // The client sees its own connection fail; the server stops reading at the cut.
    await expect(cut).rejects.toThrow('aborted');
    let failed: Record<string, unknown>;
    for (;;) {
      [failed] = rowsOf(
        await s.t.database.client.db.execute(
          sql`select id, status, rows_read, rows_stored, error from data_imports`,
        ),
      );
      if (failed.status !== 'receiving') break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(failed).toMatchObject({
      status: 'failed',
      rows_read: 2,
      rows_stored: 2,
      error: { code: 'IMPORT_UPLOAD_INTERRUPTED' },
    });
    expect(await stored(form)).toHaveLength(2);
    // The whole file again under the same key: the same import, from row 3 on; no row twice.
    const again = await upload(form, 'name,qty\nAnn,1\nBob,2\nCid,3\nDan,x\nEve,5', 'text/csv', { headers });
    expect(again.json().id).toBe(failed.id);
    const done = await accepted(again);
    expect(done).toMatchObject({ status: 'done', rowsRead: 5, rowsStored: 4, rowsRefused: 1, error: null });
    expect(
      done.refusals.map((refusal: { row: number; rule: string }) => [refusal.row, refusal.rule]),
    ).toEqual([
      [4, 'type'],
      [4, 'maxQty'],
    ]);
    expect((await stored(form)).map((r) => r.data)).toEqual([
      { name: 'Ann', qty: 1 },
      { name: 'Bob', qty: 2 },
      { name: 'Cid', qty: 3 },
      { name: 'Eve', qty: 5 },
    ]);
    const history = rowsOf(
      await s.t.database.client.db.execute(sql`select origin from record_history order by id`),
    );
    expect(history.map((entry) => entry.origin)).toEqual(
      Array.from({ length: 4 }, () => ({ kind: 'import', importId: failed.id })),
    );
  });

  it('finished imports and their refusals go IMPORT_RETENTION_DAYS after they finished; records stay', async () => {
    const form = await newForm();
    const old = await accepted(await upload(form, 'name,qty\nAnn,1\nBob,x', 'text/csv'));
    const recent = await accepted(await upload(form, 'name,qty\nCid,x', 'text/csv'));
    const db = s.t.database.client.db;
    await db.execute(
      sql`update data_imports set finished_at = now() - interval '31 days' where id = ${old.id}::uuid`,
    );
    // An unfinished one is never purged, however old.
    await db.execute(sql`insert into data_imports (config_id, config_version, user_id, request, mode, format, status, created_at)
      select config_id, config_version, user_id, request, mode, format, 'storing', now() - interval '90 days'
      from data_imports where id = ${old.id}::uuid`);
    expect(await s.t.app.get(ImportRetention).purge()).toBe(1);
    const gone = await readImport(old.id, s.admin);
    expect(gone.statusCode).toBe(404);
    expect(gone.json()).toMatchObject({ code: 'IMPORT_NOT_FOUND' });
    const left = rowsOf(await db.execute(sql`select status from data_imports order by created_at`));
    expect(left).toEqual([{ status: 'storing' }, { status: 'done' }]);
    const refusals = rowsOf(await db.execute(sql`select import_id from data_import_rows`));
    expect(refusals).toEqual([{ import_id: recent.id }]);
    expect((await stored(form)).map((r) => r.data)).toEqual([{ name: 'Ann', qty: 1 }]);
  });

  it("needs importResults: a user is refused until granted it; imports are their importer's", async () => {
    const form = await newForm();
    const refused = await upload(form, 'name,qty\nAnn,1', 'text/csv', { token: s.user.token });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ code: 'FORBIDDEN' });
    await replaceFormPermissions(s.t, s.admin, form, {
      roles: { user: ['viewForm', 'viewOwnResults', 'importResults'] },
      users: {},
    });
    const response = await upload(form, 'name,qty\nAnn,1', 'text/csv', { token: s.user.token });
    expect(response.statusCode).toBe(202);
    const result = await finished(response.json().id, s.user.token);
    expect(result).toMatchObject({ status: 'done', rowsStored: 1 });
    const bob = await createUser(s.t);
    const foreign = await readImport(result.id, bob.token);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toMatchObject({ code: 'IMPORT_NOT_FOUND' });
    const cancel = await s.t.request({
      method: 'POST',
      url: `/api/data/imports/${result.id}/cancel`,
      token: s.user.token,
    });
    expect(cancel.statusCode).toBe(409);
    expect(cancel.json()).toMatchObject({ code: 'IMPORT_FINISHED' });
    const anonymous = await readImport(result.id);
    expect(anonymous.statusCode).toBe(401);

    // Her erasure empties the e-mail address her import keeps; the import and its counts stay.
    const requestOf = async () =>
      rowsOf(
        await s.t.database.client.db.execute(
          sql`select request from data_imports where id = ${result.id}::uuid`,
        ),
      )[0].request as { actor: { userId: string; email: string } };
    expect((await requestOf()).actor.email).toBe(s.user.user.email);
    const erasure = await s.t.request({
      method: 'POST',
      url: `/api/users/${s.user.user.id}/erase`,
      token: s.admin,
    });
    expect(erasure.statusCode).toBe(202);
    let erased: { status: string; counts: Record<string, number> };
    do {
      await new Promise((resolve) => setTimeout(resolve, 20));
      erased = (
        await s.t.request({ method: 'GET', url: `/api/erasures/${erasure.json().id}`, token: s.admin })
      ).json();
    } while (erased.status !== 'done');
    expect(erased.counts).toMatchObject({ importRequests: 1, accounts: 1 });
    expect(await requestOf()).toMatchObject({ actor: { userId: s.user.user.id, email: '' } });
    expect(JSON.stringify(await requestOf())).not.toContain(s.user.user.email);
    const kept = await readImport(result.id, s.admin);
    expect(kept.json()).toMatchObject({ status: 'done', rowsStored: 1 });
  });

  it("another site's form is a 404; a bad mode, mapping or media type is refused", async () => {
    const site = await createSite(s.t, s.admin, 'A', 'a.example.com');
    const siteForm = await createConfig(s.t, s.admin, { ...RICH_FORM, siteId: site });
    const manager = await createUser(s.t, { role: 'manager' });
    const foreign = await upload(siteForm, 'name,qty\nAnn,1', 'text/csv', {
      token: manager.token,
      headers: { host: 'elsewhere.example.com' },
    });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toMatchObject({ code: 'CONFIG_NOT_FOUND' });
    const form = await newForm();
    const mode = await upload(form, 'name,qty', 'text/csv', { query: { mode: 'some' } });
    expect(mode.statusCode).toBe(422);
    const mapping = await upload(form, 'name,qty', 'text/csv', { query: { mapping: '[1]' } });
    expect(mapping.statusCode).toBe(422);
    const media = await upload(form, 'name,qty', 'text/plain');
    expect(media.statusCode).toBe(415);
    const elsewhere = await postRecord(s.t, s.admin, form, 'name,qty\nAnn,1', { 'content-type': 'text/csv' });
    expect(elsewhere.statusCode).toBe(415);
    const broken = await upload(form, 'name,qty\n"Ann,1', 'text/csv');
    expect(broken.statusCode).toBe(400);
    expect(broken.json()).toMatchObject({ code: 'IMPORT_FILE_UNREADABLE' });
    // Bytes that are not UTF-8 are refused, never stored as U+FFFD.
    const latin1 = Buffer.from('name,qty\nA\xff\xfeB,1\n', 'latin1');
    for (const [payload, type, format] of [
      [latin1, 'text/csv', 'csv'],
      [Buffer.from('{"name":"A\xff","qty":1}\n', 'latin1'), 'application/x-ndjson', 'ndjson'],
    ] as const) {
      const notUtf8 = await upload(form, payload, type);
      expect(notUtf8.statusCode).toBe(400);
      expect(notUtf8.json()).toMatchObject({
        code: 'IMPORT_FILE_UNREADABLE',
        details: { format, reason: 'the file is not UTF-8 text' },
      });
    }
    expect(await stored(form)).toEqual([]);
  });

  it('a workbook whose zip entry lies about its sizes is a 400 once it stalls (IMPORT_STALL_MS), not a hang', async () => {
    const form = await newForm();
    const name = Buffer.from('xl/worksheets/sheet1.xml');
    const content = Buffer.from('x'.repeat(100_000));
    const compressed = deflateRawSync(content);
    const crc = crc32(content);
    /** A zip record: little-endian [offset, value] fields, 4 bytes each where marked, else 2. */
    const record = (length: number, fields: [number, number, 4?][]) => {
      const bytes = Buffer.alloc(length);
      for (const [offset, value, size] of fields)
        if (size === 4) bytes.writeUInt32LE(value, offset);
        else bytes.writeUInt16LE(value, offset);
      return bytes;
    };
    // The local header and the central directory both say 5 bytes compressed, 10 stored.
    const local = record(30, [
      [0, 0x04034b50, 4],
      [4, 20],
      [8, 8],
      [14, crc, 4],
      [18, 5, 4],
      [22, 10, 4],
      [26, name.length],
    ]);
    const central = record(46, [
      [0, 0x02014b50, 4],
      [4, 20],
      [6, 20],
      [10, 8],
      [16, crc, 4],
      [20, 5, 4],
      [24, 10, 4],
      [28, name.length],
    ]);
    const end = record(22, [
      [0, 0x06054b50, 4],
      [8, 1],
      [10, 1],
      [12, central.length + name.length, 4],
      [16, local.length + name.length + compressed.length, 4],
    ]);
    const file = Buffer.concat([local, name, compressed, central, name, end]);
    const response = await upload(
      form,
      file,
      'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    );
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({
      code: 'IMPORT_FILE_UNREADABLE',
      details: { format: 'xlsx', reason: 'the file gave nothing for 3000 ms after it was uploaded' },
    });
    expect(await stored(form)).toEqual([]);
  });

  it('maps columns by `mapping`; NDJSON lines that are not objects are refused rows', async () => {
    const form = await newForm();
    const file = 'Customer,Pieces,Junk\nAnn,2,x';
    const mapped = await accepted(
      await upload(form, file, 'text/csv', {
        query: { mapping: JSON.stringify({ Customer: 'name', Pieces: 'qty', Junk: null }) },
      }),
    );
    expect(mapped).toMatchObject({ status: 'done', rowsStored: 1 });
    const lines = await accepted(
      await upload(form, '{"name":"Bob","qty":1}\n[1]\nnot json\n', 'application/x-ndjson'),
    );
    expect(lines).toMatchObject({ status: 'done', rowsRead: 3, rowsStored: 1, rowsRefused: 2 });
    expect(lines.refusals.map((r: { row: number; rule: string }) => [r.row, r.rule])).toEqual([
      [2, 'isObject'],
      [3, 'json'],
    ]);
    expect((await stored(form)).map((r) => r.data)).toEqual([
      { name: 'Ann', qty: 2 },
      { name: 'Bob', qty: 1 },
    ]);
  });

  it('a NUL, a lone surrogate or too deep a value is a refused row in every mode, as a create refuses it', async () => {
    const form = await newForm();
    const csv = 'name,qty\nA\u0000B,1\nAnn,2';
    const ndjson = [
      '{"name":"a\\u0000","qty":1}',
      '{"name":"\\ud800","qty":1}',
      '{"name":"Bob","qty":1,"k\\u0000":1}',
      `{"name":"Cid","qty":1,"address":{"geo":${'['.repeat(70)}${']'.repeat(70)}}}`,
      '{"name":"Dan","qty":3}',
    ].join('\n');
    const rules = (result: { refusals: { row: number; field: string; rule: string }[] }) =>
      result.refusals.map((r) => [r.row, r.field, r.rule]);
    const csvRefusals = [[1, 'name', 'noNullCharacter']];
    const ndjsonRefusals = [
      [1, 'name', 'noNullCharacter'],
      [2, 'name', 'wellFormedUnicode'],
      [3, 'k\\u0000', 'noNullCharacter'],
      [4, '$row', 'maxDepth'],
    ];
    for (const mode of ['validate', 'all-or-nothing']) {
      const fromCsv = await accepted(await upload(form, csv, 'text/csv', { query: { mode } }));
      expect(fromCsv).toMatchObject({ rowsRead: 2, rowsStored: 0, rowsRefused: 1 });
      expect(rules(fromCsv)).toEqual(csvRefusals);
      const fromLines = await accepted(
        await upload(form, ndjson, 'application/x-ndjson', { query: { mode } }),
      );
      expect(fromLines).toMatchObject({ rowsRead: 5, rowsStored: 0, rowsRefused: 4 });
      expect(rules(fromLines)).toEqual(ndjsonRefusals);
    }
    expect(await stored(form)).toEqual([]);
    const fromCsv = await accepted(await upload(form, csv, 'text/csv', { query: { mode: 'valid-rows' } }));
    expect(fromCsv).toMatchObject({ status: 'done', rowsStored: 1, rowsRefused: 1 });
    const fromLines = await accepted(await upload(form, ndjson, 'application/x-ndjson'));
    expect(fromLines).toMatchObject({ status: 'done', rowsStored: 1, rowsRefused: 4 });
    expect(fromLines.refusals[3].message).toBe('The row is nested too deeply (at most 64 levels).');
    // A row larger than a create's whole body (BODY_LIMIT, 1 MB here) is refused too.
    const large = await accepted(
      await upload(form, `name,qty,note\nBig,1,${'x'.repeat(1_100_000)}\nSmall,1,y`, 'text/csv', {
        query: { mode: 'validate' },
      }),
    );
    expect(large).toMatchObject({ rowsRead: 2, rowsRefused: 1 });
    expect(large.refusals).toEqual([
      {
        row: 1,
        field: '$row',
        rule: 'maxBytes',
        message: 'The row is larger than a record may be (1048576 bytes of JSON).',
      },
    ]);
    expect((await stored(form)).map((r) => r.data)).toEqual([
      { name: 'Ann', qty: 2 },
      { name: 'Dan', qty: 3 },
    ]);
  });

  it('writes one record.imported event per record, only when somebody takes that type', async () => {
    const form = await newForm();
    const db = s.t.database.client.db;
    // Somebody takes record.created only (a webhook, a trigger): an import writes no event for them.
    await db.execute(
      sql`insert into domain_event_interests (type, config_id) values ('record.created', null)`,
    );
    await accepted(await upload(form, 'name,qty\nAnn,1\nBob,2', 'text/csv'));
    expect(await domainEventsWritten(s.t)).toBe(0);
    await db.execute(
      sql`insert into domain_event_interests (type, config_id) values ('record.imported', ${form}::uuid)`,
    );
    await accepted(await upload(form, 'name,qty\nCid,1\nDan,2\nEve,3', 'text/csv'));
    expect(await domainEventsWritten(s.t)).toBe(3);
    await db.execute(sql`delete from domain_event_interests`);
  });

  it('an import whose instance died while storing is taken over and finished, each row stored once', async () => {
    const form = await newForm();
    const [user] = rowsOf(
      await s.t.database.client.db.execute(sql`select id from users where role = 'admin' limit 1`),
    );
    const actor = { userId: user.id, role: 'admin', email: 'admin@example.com', siteId: null };
    const [row] = rowsOf(
      await s.t.database.client.db.execute(sql`insert into data_imports
        (config_id, config_version, user_id, request, mode, format, status, rows_read, rows_stored, lease_owner, lease_until)
        values (${form}::uuid, 1, ${user.id}::uuid, ${JSON.stringify({ actor, siteId: null, locale: 'en', requestId: 'r' })}::jsonb,
          'valid-rows', 'csv', 'storing', 3, 0, 'dead-instance', now() - interval '1 second') returning id`),
    );
    await s.t.database.client.db
      .execute(sql`insert into data_import_rows (import_id, row_number, data, computed_results)
      values (${row.id}::uuid, 1, '{"name":"Ann","qty":1}', null), (${row.id}::uuid, 3, '{"name":"Bob","qty":2}', null)`);
    // Row 2 was refused: staged with its refusal and no data.
    await s.t.database.client.db.execute(sql`insert into data_import_rows (import_id, row_number, refusals)
      values (${row.id}::uuid, 2, '[{"field":"qty","rule":"type","message":"must be integer"}]')`);
    await s.t.app.get(ImportProcessor).takeOver();
    const result = await finished(String(row.id));
    expect(result).toMatchObject({ status: 'done', rowsStored: 2 });
    expect((await stored(form)).map((r) => r.data)).toEqual([
      { name: 'Ann', qty: 1 },
      { name: 'Bob', qty: 2 },
    ]);
    // Taken over again (a second instance that saw it expired too): nothing is stored twice.
    await s.t.database.client.db.execute(
      sql`update data_imports set status = 'storing', lease_until = now() - interval '1 second'`,
    );
    await s.t.app.get(ImportProcessor).takeOver();
    expect(await stored(form)).toHaveLength(2);
  });
});
