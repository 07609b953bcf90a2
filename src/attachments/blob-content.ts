/**
 * Where the bytes of a blob live. The database store (DatabaseBlobContent, the default) keeps them
 * in attachment_blob_chunks; a filesystem or S3-compatible store implements the same three methods
 * keyed by the blob id (README "Attachments", "Adding a storage backend"). Which blobs exist, their
 * hashes and what refers to them always stay in the database, so deduplication and cleanup do not
 * depend on the store.
 */
export interface BlobContent {
  /**
   * Stores one piece of a new blob's content: pieces come in order (`seq` 0, 1, ...), each
   * `chunkSize` bytes but the last, one at a time (the upload waits for each).
   */
  append(blobId: string, seq: number, bytes: Buffer): Promise<void>;
  /** The bytes `start..end` (inclusive) of a blob, in pieces, read as the consumer asks for them. */
  read(blob: { id: string; chunkSize: number }, start: number, end: number): AsyncIterable<Buffer>;
  /** Removes the content of blobs that are gone (the database store's rows go with the blob row). */
  remove(blobIds: string[]): Promise<void>;
}

export const BLOB_CONTENT = Symbol('BLOB_CONTENT');

/** Bytes per stored chunk: large enough to keep round trips few, small enough to hold a few in memory. */
export const CHUNK_BYTES = 256 * 1024;
