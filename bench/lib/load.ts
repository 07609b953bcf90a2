import autocannon from 'autocannon';

export interface LoadResult {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
}

/** Drives one URL with autocannon over loopback and returns throughput and latency percentiles (ms). */
export async function load(options: {
  url: string;
  connections: number;
  durationSeconds?: number;
  amount?: number;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
}): Promise<LoadResult> {
  const result = await autocannon({
    url: options.url,
    connections: options.connections,
    ...(options.amount ? { amount: options.amount } : { duration: options.durationSeconds ?? 10 }),
    method: options.method ?? 'GET',
    headers: options.headers,
    body: options.body,
  });
  return {
    requestsPerSecond: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors,
    non2xx: result.non2xx,
  };
}

/** One JSON line per figure, as docs/design.md section 8 asks. */
export function report(figure: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(figure)}\n`);
}
