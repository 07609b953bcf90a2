import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';

export const ROOT = resolve(__dirname, '../..');

export interface RunningServer {
  url: string;
  process: ChildProcess;
  /** Peak resident memory of the process so far, in MB (VmHWM). */
  peakRssMb(): number;
  /** Resident memory of the process now, in MB (VmRSS). */
  rssMb(): number;
  stop(): Promise<void>;
}

/** Starts a Node process serving HTTP on `port` and waits until `healthPath` answers. */
export async function startServer(
  args: string[],
  env: Record<string, string>,
  port: number,
  healthPath = '/health',
  cwd = ROOT,
): Promise<RunningServer> {
  const child = spawn(
    process.execPath,
    [...(process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean), ...args],
    {
      cwd,
      env: { ...process.env, ...env, PORT: String(port) },
      // BENCH_SERVER_STDOUT: a file each server's standard output is appended to (its log lines,
      // `--trace-gc` from BENCH_NODE_ARGS), for a diagnosis; thrown away otherwise.
      stdio: [
        'ignore',
        process.env.BENCH_SERVER_STDOUT ? openSync(process.env.BENCH_SERVER_STDOUT, 'a') : 'ignore',
        'inherit',
      ],
    },
  );
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server ${args.join(' ')} exited with ${child.exitCode}`);
    try {
      const response = await fetch(url + healthPath);
      if (response.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`server ${args.join(' ')} did not start`);
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    url,
    process: child,
    peakRssMb: () => statusMb(child, 'VmHWM'),
    rssMb: () => statusMb(child, 'VmRSS'),
    stop: () =>
      new Promise<void>((done) => {
        if (child.exitCode !== null) return done();
        child.once('exit', () => done());
        child.kill('SIGTERM');
      }),
  };
}

/**
 * The peak of the server's resident memory (VmRSS) while `work` runs, sampled every 50 ms: a
 * transfer's own peak, where VmHWM would also hold whatever the process reached before it.
 */
export async function peakRssDuring(server: RunningServer, work: () => Promise<unknown>): Promise<number> {
  let peak = server.rssMb();
  const timer = setInterval(() => (peak = Math.max(peak, server.rssMb())), 50);
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  return Math.max(peak, server.rssMb());
}

/** A memory line of `/proc/<pid>/status` in MB. */
function statusMb(child: ChildProcess, field: 'VmHWM' | 'VmRSS'): number {
  const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
  const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(status);
  return match ? Math.round(Number(match[1]) / 1024) : NaN;
}
