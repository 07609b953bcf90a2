import { createHash, type Hash } from 'node:crypto';
import type { MultipartPart } from '../common/http/multipart-body';

/**
 * What tells two multipart bodies apart for an `Idempotency-Key`: every part in order, a text part
 * by its name and value, a file part by its name, filename and the SHA-256 of its bytes. Taken as
 * the parts are read, so no file is held for it.
 */
export class MultipartFingerprint {
  private readonly whole = createHash('sha256');

  /** The parts, unchanged, each added to the fingerprint as the consumer reads it. */
  async *taking(parts: AsyncIterable<MultipartPart>): AsyncIterable<MultipartPart> {
    for await (const part of parts) {
      if (part.kind === 'text') {
        this.add(['text', part.name, JSON.stringify(part.value) ?? '']);
        yield part;
        continue;
      }
      const bytes = createHash('sha256');
      yield { ...part, body: hashing(part.body, bytes) };
      this.add(['file', part.name, part.filename, bytes.digest('hex')]);
    }
  }

  /** Reads every part to its end, storing nothing: the fingerprint of a body not otherwise read. */
  async readAll(parts: AsyncIterable<MultipartPart>): Promise<string> {
    for await (const part of this.taking(parts)) if (part.kind === 'file') await drain(part.body);
    return this.digest();
  }

  /** Valid once the parts are read to the end. Prefixed, so it never equals a JSON body's hash. */
  digest(): string {
    return `multipart:${this.whole.digest('hex')}`;
  }

  private add(fields: string[]): void {
    // Length-prefixed: no choice of names or values makes two different parts read the same.
    for (const field of fields) this.whole.update(`${Buffer.byteLength(field)}:${field};`);
  }
}

async function* hashing(body: AsyncIterable<Buffer>, hash: Hash): AsyncIterable<Buffer> {
  for await (const chunk of body) {
    hash.update(chunk);
    yield chunk;
  }
}

async function drain(body: AsyncIterable<Buffer>): Promise<void> {
  for await (const chunk of body) void chunk;
}
