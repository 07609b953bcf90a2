import type { Readable } from 'node:stream';

/**
 * A request body streamed from where it lives (a record's file), never whole in memory. It is
 * opened for each request that sends it, so a 307/308 redirect that keeps the body sends it again.
 */
export interface StreamedBody {
  /** Its size in bytes, sent as Content-Length (a sized body, not chunks: partners may need it). */
  length: number;
  /** A fresh stream of its bytes; it must yield exactly `length` bytes. */
  open(): Promise<Readable>;
}

export function isStreamedBody(body: unknown): body is StreamedBody {
  return typeof body === 'object' && body !== null && !Buffer.isBuffer(body);
}

/** Opening a streamed body failed: its cause is the caller's own error, given back as is. */
export class BodyOpenError extends Error {
  constructor(cause: unknown) {
    super('The request body could not be opened', { cause });
  }
}
