export interface Benchmark {
  name: string;
  run(): Promise<void>;
}

/** Registered benchmarks, in the order `npm run bench` runs them. */
export const BENCHMARKS: Benchmark[] = [];
