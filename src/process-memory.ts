import { setFlagsFromString } from 'node:v8';

/**
 * The process's memory policy. main.ts imports this file first, so it applies before any other
 * module is loaded. A V8 flag the operator passes (node option or NODE_OPTIONS) wins over each
 * choice made here.
 *
 * Young generation: V8 grows it (up to two 16 MB semi-spaces) when much of what is allocated
 * survives a collection, as it does while the process boots: 2,000 modules compiled, the application
 * built. That space then stays resident for the life of the process, about 25 MB of the 140 MB held
 * after boot. It keeps its initial size until the server listens (`bootFinished`), and grows as V8
 * decides from then on, so requests are collected as by default.
 *
 * Old generation: V8 lets it grow to up to four times what survived the last full collection before
 * collecting again. An export promotes a steady flow of short-lived rows and buffers, so a
 * 1,000,000-row XLSX export peaked at about 300 MB that way; growing by at most twice the survivors
 * keeps it near 210 MB, for a few percent more collection time. With the embedded database the
 * process also holds the database, and grows by at most half the survivors instead: after 60 s of
 * creates it held 290-307 MB instead of 318-336, with no loss of creates above the benchmark's noise
 * (bench/README "Embedded memory: the old generation's growth").
 */
const YOUNG_GROWTH = 'semi-space-growth-factor';
const OLD_GROWTH = 'heap-growing-percent';
/** V8's default young generation growth (`node --v8-options`). */
const DEFAULT_YOUNG_GROWTH_FACTOR = 2;
const OLD_GROWTH_PERCENT = 100;
const EMBEDDED_OLD_GROWTH_PERCENT = 50;

const operatorSet = (flag: string) =>
  new RegExp(`--${flag.replace(/-/g, '[-_]')}\\b`).test(
    [...process.execArgv, process.env.NODE_OPTIONS ?? ''].join(' '),
  );
const youngGrowthIsOurs = !operatorSet(YOUNG_GROWTH);

if (youngGrowthIsOurs) setFlagsFromString(`--${YOUNG_GROWTH}=1`);
const oldGrowthIsOurs = !operatorSet(OLD_GROWTH);
if (oldGrowthIsOurs) setFlagsFromString(`--${OLD_GROWTH}=${OLD_GROWTH_PERCENT}`);

/** The old generation's growth for a process that holds the embedded database (V8 reads it at each collection). */
export function holdsEmbeddedDatabase(): void {
  if (oldGrowthIsOurs) setFlagsFromString(`--${OLD_GROWTH}=${EMBEDDED_OLD_GROWTH_PERCENT}`);
}

/** From now on V8 sizes the young generation as it does by default. */
export function bootFinished(): void {
  if (youngGrowthIsOurs) setFlagsFromString(`--${YOUNG_GROWTH}=${DEFAULT_YOUNG_GROWTH_FACTOR}`);
}
