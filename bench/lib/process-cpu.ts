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
