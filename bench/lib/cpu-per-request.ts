import { load } from './load';
import { cpuMsOf, sampleDatabaseCpu } from './process-cpu';
import { type RunningServer } from './processes';

/**
 * CPU time per request of `server`'s process and of the database's backends over `amount` requests
 * of `request`: user + system time, which contention on a shared machine barely moves, unlike req/s.
 */
export async function cpuPerRequest(
  server: RunningServer,
  databaseUrl: string,
  request: Omit<Parameters<typeof load>[0], 'amount'>,
  amount: number,
) {
  const before = cpuMsOf(server.process.pid!);
  // Sampled: a backend of the other server's pool that closes meanwhile must not count negative.
  const database = await sampleDatabaseCpu(databaseUrl);
  const result = await load({ ...request, amount });
  const cpuMs = cpuMsOf(server.process.pid!) - before;
  const databaseCpuMs = await database.stop();
  return {
    requests: amount,
    non2xx: result.non2xx,
    reqPerSec: result.requestsPerSecond,
    cpuMsPerRequest: Number((cpuMs / amount).toFixed(3)),
    databaseCpuMsPerRequest: databaseCpuMs === null ? null : Number((databaseCpuMs / amount).toFixed(3)),
  };
}
