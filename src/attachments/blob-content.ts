/**
 * Where the bytes of a blob live. Two stores implement it (ATTACHMENT_STORE): the database
 * (DatabaseBlobContent, rows of attachment_blob_chunks) and a folder (FilesystemBlobContent, a file
 * per blob); an S3-compatible store would implement the same methods keyed by the blob id (README
 * "Attachments", "Adding a storage backend"). Which blobs exist, their hashes and what refers to them
 * always stay in the database, so deduplication and cleanup do not depend on the store.
 */
export interface BlobContent {
  /** Opens a new blob's content for writing: its row exists (pending) before this is called. */
  writer(blobId: string): BlobWriter;
  /** The bytes `start..end` (inclusive) of a blob, in pieces, read as the consumer asks for them. */
  read(blob: { id: string; chunkSize: number }, start: number, end: number): AsyncIterable<Buffer>;
  /** Removes the content of blobs whose rows are gone (the database store's rows go with the blob row). */
  remove(blobIds: string[]): Promise<void>;
  /**
   * Removes content no blob row names any more: what a crash between a row's delete and `remove`
   * left behind. `existing` answers which of the ids given still have a row. How many were removed.
   */
  removeOrphans(existing: (blobIds: string[]) => Promise<Set<string>>): Promise<number>;
}

/** One new blob's content being written. */
export interface BlobWriter {
  /** The next piece: pieces come in order, each `CHUNK_BYTES` but the last, one at a time. */
  write(bytes: Buffer): Promise<void>;
  /** Makes what was written durable: the upload is acknowledged only after this resolves. */
  finish(): Promise<void>;
  /** Releases what the writer holds (after `finish`, or after a failure): always called. */
  close(): Promise<void>;
}

export const BLOB_CONTENT = Symbol('BLOB_CONTENT');

/** Bytes per stored chunk: large enough to keep round trips few, small enough to hold a few in memory. */
export const CHUNK_BYTES = 256 * 1024;
