import autocannon from 'autocannon';

export interface LoadResult {
  requestsPerSecond: number;
  /** Requests answered in all. */
  requests: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  /**
   * From the start of the load to its last response, ms. autocannon ends a load of a fixed `amount`
   * only at its next one-second tick, so its own duration is rounded up to whole seconds.
   */
  elapsedMs: number;
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
  const startedAt = performance.now();
  let lastResponseAt = startedAt;
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: options.url,
        connections: options.connections,
        ...(options.amount ? { amount: options.amount } : { duration: options.durationSeconds ?? 10 }),
        method: options.method ?? 'GET',
        headers: options.headers,
        body: options.body,
      },
      (error: Error | null, finished) => (error ? reject(error) : resolve(finished)),
    );
    instance.on('response', () => {
      lastResponseAt = performance.now();
    });
  });
  return {
    elapsedMs: lastResponseAt - startedAt,
    requestsPerSecond: Math.round(result.requests.average),
    requests: result.requests.total,
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
