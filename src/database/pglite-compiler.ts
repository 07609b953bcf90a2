import { setFlagsFromString } from 'node:v8';

/**
 * Which of V8's WebAssembly compilers runs the embedded database. By default V8 starts every function
 * with its baseline compiler (Liftoff) and recompiles the hot ones with its optimising compiler
 * (TurboFan) in background threads. For PGlite's 9 MB module that recompilation keeps 55-90 MB of
 * native memory (compiler zones and code) that is never given back, most of an embedded server's
 * growth after boot; the optimised code runs scans about 1.3x and writes about 1.1x faster. Without
 * PGLITE_OPTIMIZE the process keeps to the baseline compiler (`--liftoff-only`, a V8 flag that only
 * changes which compiler runs: the results are the same). Flags apply to the whole process and must
 * be set before the module is compiled: this runs before PGlite is first loaded.
 */
export function chooseWasmCompiler(optimize: boolean): void {
  if (!optimize) setFlagsFromString('--liftoff-only');
}
