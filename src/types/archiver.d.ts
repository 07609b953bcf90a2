// The part of archiver 5 (which ships no types) that the ZIP export uses.
declare module 'archiver' {
  import type { Readable, Transform } from 'node:stream';

  interface Archiver extends Transform {
    append(source: Readable | Buffer | string, data: { name: string; store?: boolean }): this;
    finalize(): Promise<void>;
    abort(): this;
  }

  function archiver(format: 'zip', options?: { zlib?: { level?: number } }): Archiver;
  export = archiver;
}
