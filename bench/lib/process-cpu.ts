import { readFileSync } from 'node:fs';
import { Client } from 'pg';

/** User + system CPU time of a process so far, in ms (from /proc/<pid>/stat). */
export function cpuMsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  // utime and stime are fields 14 and 15 of the stat line, in clock ticks (100 per second here).
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/**
 * CPU time so far of the PostgreSQL backends serving `databaseUrl`'s database (the service's pool,
 * which stays connected under load), in ms; null when /proc of the server is not readable here.
 */
export async function databaseBackendsCpuMs(databaseUrl: string): Promise<number | null> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>(
      'select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
    );
    let total = 0;
    for (const { pid } of rows) {
      try {
        total += cpuMsOf(pid);
      } catch {
        return null;
      }
    }
    return total;
  } finally {
    await client.end();
  }
}

/**
 * CPU time the PostgreSQL backends serving `databaseUrl`'s database spend from now until `stop()`,
 * in ms, sampled every `everyMs`: a backend that ends meanwhile (a pool closing an idle connection)
 * counts up to its last sample, so a long run loses at most one interval of it. Null when /proc of
 * the server is not readable here.
 */
export async function sampleDatabaseCpu(
  databaseUrl: string,
  everyMs = 500,
): Promise<{ stop: () => Promise<number | null> }> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  const first = new Map<number, number>();
  const last = new Map<number, number>();
  let readable = true;
  const sample = async () => {
    const { rows } = await client.query<{ pid: number }>(
      'select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
    );
    for (const { pid } of rows) {
      try {
        const cpu = cpuMsOf(pid);
        // A backend first seen after the first sample started since: all its CPU is the run's.
        if (!first.has(pid)) first.set(pid, 0);
        last.set(pid, cpu);
      } catch {
        readable = false;
      }
    }
  };
  await sample();
  // Backends present at the start count from there.
  for (const [pid, cpu] of last) first.set(pid, cpu);
  let sampling = Promise.resolve();
  const timer = setInterval(() => {
    sampling = sampling.then(sample).catch(() => undefined);
  }, everyMs);
  return {
    stop: async () => {
      clearInterval(timer);
      await sampling;
      await sample();
      await client.end();
      if (!readable) return null;
      let total = 0;
      for (const [pid, cpu] of last) total += cpu - (first.get(pid) ?? 0);
      return total;
    },
  };
}
