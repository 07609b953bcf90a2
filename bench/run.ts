// Entry point of `npm run bench`; each benchmark module registers itself in BENCHMARKS.
import { BENCHMARKS } from './benchmarks';

async function main(): Promise<void> {
  const only = process.argv.slice(2);
  const selected = BENCHMARKS.filter((b) => only.length === 0 || only.includes(b.name));
  if (selected.length === 0) {
    console.log(
      JSON.stringify({
        bench: 'none',
        note: 'no benchmark selected',
        available: BENCHMARKS.map((b) => b.name),
      }),
    );
    return;
  }
  for (const benchmark of selected) await benchmark.run();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
