// The baseline of every benchmark: a bare Fastify server doing the same database work with `pg` and
// nothing else (no Nest, no auth, no validation). Started by the benchmarks as a child process.
import Fastify from 'fastify';
import { Pool } from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { and, sql } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import { compileGridFilter } from '../src/data/grid/grid-filter.compiler';
import { parseGridLoadOptions } from '../src/data/grid/grid-load-options';
import { countQuery, recordsQuery } from '../src/data/grid/grid-query.service';
import { BASELINE_SQL } from './baseline-sql';

const pool = new Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.DATABASE_POOL_SIZE ?? 10),
});
const app = Fastify({ logger: false });

app.get('/health', async () => ({ status: 'ok' }));

app.post<{ Params: { configId: string }; Body: Record<string, unknown> }>(
  '/create/:configId',
  async (request, reply) => {
    const result = await pool.query(BASELINE_SQL.create, [request.params.configId, request.body]);
    return reply.code(201).send({ success: true, dataId: result.rows[0].id, data: result.rows[0] });
  },
);

app.get<{ Params: { configId: string }; Querystring: { city: string } }>(
  '/list/:configId',
  async (request) => {
    const filter = JSON.stringify({ city: request.query.city });
    const [count, page] = await Promise.all([
      pool.query(BASELINE_SQL.listCount, [request.params.configId, filter]),
      pool.query(BASELINE_SQL.listPage, [request.params.configId, filter, 20, 0]),
    ]);
    const total = Number(count.rows[0].total);
    return { data: page.rows, total, page: 1, pages: Math.ceil(total / 20) };
  },
);

// The grid figure is compared on the very statements the service runs: they are rendered once from
// the service's own SQL builders, then executed here with nothing else around them.
const dialect = new PgDialect();
type Statement = { sql: string; params: unknown[] };
const gridStatements = new Map<string, { count: Statement; page: Statement }>();
function gridStatementsFor(configId: string, city: string) {
  const key = `${configId}:${city}`;
  let statements = gridStatements.get(key);
  if (!statements) {
    const options = parseGridLoadOptions({
      filter: JSON.stringify(['data.city', '=', city]),
      sort: JSON.stringify([{ selector: 'data.age', desc: true }]),
    });
    const where = and(
      sql`data_records.config_id = ${configId} and data_records.is_active`,
      compileGridFilter(options.filter!),
    )!;
    statements = {
      count: dialect.sqlToQuery(countQuery(where)),
      page: dialect.sqlToQuery(recordsQuery(where, [], options.sort, 0, 20)),
    };
    gridStatements.set(key, statements);
  }
  return statements;
}

app.get<{ Params: { configId: string }; Querystring: { city: string } }>(
  '/grid/:configId',
  async (request) => {
    const statements = gridStatementsFor(request.params.configId, request.query.city);
    const [count, page] = await Promise.all([
      pool.query(statements.count.sql, statements.count.params),
      pool.query(statements.page.sql, statements.page.params),
    ]);
    return { data: page.rows, totalCount: Number(count.rows[0].n) };
  },
);

app.get<{ Params: { configId: string } }>('/stats/:configId', async (request) => {
  const [counts, byUser] = await Promise.all([
    pool.query(BASELINE_SQL.statsCounts, [request.params.configId, 'UTC']),
    pool.query(BASELINE_SQL.statsByUser, [request.params.configId]),
  ]);
  const row = counts.rows[0];
  return {
    total: Number(row.total),
    today: Number(row.today),
    thisWeek: Number(row.this_week),
    byUser: byUser.rows.map((r) => ({ userId: r.user_id, count: Number(r.count) })),
  };
});

app.get<{ Params: { configId: string } }>('/export/:configId', async (request, reply) => {
  const client = await pool.connect();
  const sql = BASELINE_SQL.exportCopy.replace(
    '$1',
    `'${request.params.configId.replace(/[^0-9a-f-]/g, '')}'`,
  );
  const stream = client.query(copyTo(sql));
  const release = () => client.release();
  stream.on('end', release);
  stream.on('error', release);
  return reply.type('text/csv').send(stream);
});

app.listen({ port: Number(process.env.PORT ?? 3999), host: '127.0.0.1' }).catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
