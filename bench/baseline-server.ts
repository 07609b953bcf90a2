// The baseline of every benchmark: a bare Fastify server answering the same questions with `pg` and
// hand-written SQL (baseline-sql.ts), nothing else: no Nest, auth, validation or mapping. It imports
// nothing from the service. Started by the benchmarks as a child process.
import Fastify from 'fastify';
import { Pool } from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { BASELINE_SQL } from './baseline-sql';
import { runBaselineWorkflow } from './baseline-workflow';

const pool = new Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.DATABASE_POOL_SIZE ?? 16),
});
const app = Fastify({ logger: false });
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

app.get('/health', async () => ({ status: 'ok' }));

app.post<{ Params: { configId: string }; Body: Record<string, unknown> }>(
  '/create/:configId',
  async (request, reply) => {
    const result = await pool.query(BASELINE_SQL.create, [request.params.configId, request.body]);
    return reply.code(201).send({ success: true, dataId: result.rows[0].id, data: result.rows[0] });
  },
);

app.post<{ Params: { configId: string }; Body: { data: unknown }; Querystring: { receiver: string } }>(
  '/workflow/:configId',
  async (request, reply) => {
    const answer = await runBaselineWorkflow(
      pool,
      request.params.configId,
      request.body.data,
      request.query.receiver,
    );
    return reply.code(answer.status).send(answer.body);
  },
);

app.get<{ Params: { configId: string }; Querystring: { city: string } }>(
  '/list/:configId',
  async (request) => {
    const { configId } = request.params;
    const [count, page] = await Promise.all([
      pool.query(BASELINE_SQL.listCount, [configId, request.query.city]),
      pool.query(BASELINE_SQL.listPage, [configId, request.query.city, 20, 0]),
    ]);
    const total = Number(count.rows[0].total);
    return { data: page.rows, total, page: 1, pages: Math.ceil(total / 20) };
  },
);

app.get<{
  Params: { configId: string };
  Querystring: { ageAbove: string; nameContains: string; skip?: string; take?: string };
}>('/grid/:configId', async (request) => {
  const { configId } = request.params;
  const { ageAbove, nameContains } = request.query;
  const needle = nameContains.toLowerCase();
  const page = await pool.query(BASELINE_SQL.gridPage, [
    configId,
    Number(ageAbove),
    needle,
    Number(request.query.take ?? 20),
    Number(request.query.skip ?? 0),
  ]);
  const totalCount =
    page.rows.length > 0
      ? Number(page.rows[0].total)
      : Number(
          (await pool.query(BASELINE_SQL.gridCount, [configId, Number(ageAbove), needle])).rows[0].total,
        );
  return { data: page.rows.map(({ total: _total, ...row }) => row), totalCount };
});

app.get<{ Params: { configId: string } }>('/stats/:configId', async (request) => {
  const { configId } = request.params;
  const [total, today, thisWeek, byUser] = await Promise.all([
    pool.query(BASELINE_SQL.statsTotal, [configId]),
    pool.query(BASELINE_SQL.statsSince, [configId, 'day', 'UTC']),
    pool.query(BASELINE_SQL.statsSince, [configId, 'week', 'UTC']),
    pool.query(BASELINE_SQL.statsByUser, [configId]),
  ]);
  return {
    total: Number(total.rows[0].n),
    today: Number(today.rows[0].n),
    thisWeek: Number(thisWeek.rows[0].n),
    byUser: byUser.rows.map((row) => ({ userId: row.user_id, count: Number(row.n) })),
  };
});

app.get<{ Params: { configId: string } }>('/export/:configId', async (request, reply) => {
  if (!UUID.test(request.params.configId)) return reply.code(400).send({ error: 'not a uuid' });
  const client = await pool.connect();
  const stream = client.query(copyTo(BASELINE_SQL.exportCopy(request.params.configId)));
  const release = () => client.release();
  stream.on('end', release);
  stream.on('error', release);
  return reply.type('text/csv').send(stream);
});

pool
  .query(BASELINE_SQL.createRunsTable)
  .then(() => app.listen({ port: Number(process.env.PORT ?? 3999), host: '127.0.0.1' }))
  .catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });

// Exits on the bench's SIGTERM through process.exit, so `--cpu-prof` in BENCH_NODE_ARGS writes the
// baseline's profile too (a signal's default action would end the process before it is written).
process.once('SIGTERM', () => process.exit(0));
