import { runAttachmentBenchmarks } from './suites/attachments.suite';
import { runImportBenchmark } from './suites/import.suite';
import { runReadBenchmarks } from './suites/read.suite';
import { runReplicaBenchmarks } from './suites/replica.suite';
import { runWriteBenchmarks } from './suites/write.suite';

export interface Benchmark {
  name: string;
  run(): Promise<void>;
}

/** Registered benchmarks, in the order `npm run bench` runs them (`npm run bench -- read` picks one). */
export const BENCHMARKS: Benchmark[] = [
  { name: 'write', run: runWriteBenchmarks },
  { name: 'read', run: runReadBenchmarks },
  { name: 'import', run: runImportBenchmark },
  { name: 'attachments', run: runAttachmentBenchmarks },
  { name: 'replica', run: runReplicaBenchmarks },
];
