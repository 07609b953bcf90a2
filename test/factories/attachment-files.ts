import { createHash } from 'node:crypto';

/**
 * Small real files for the attachment suites (uploaded raw or as multipart parts): their bytes are
 * what the service sniffs the media type from, so each suite must send the same ones.
 */

/** A 1x1 PNG. */
export const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082',
  'hex',
);

/** The smallest document a PDF sniffer takes for one. */
export const PDF = Buffer.from('%PDF-1.4\n1 0 obj<</Type/Catalog>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n');

export const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

/** The whole answer to an upload of `bytes`: a new attachment id, and what was stored of the file. */
export function uploadAnswer(
  bytes: Buffer,
  file: { field: string; filename: string; mediaType: string },
): Record<string, unknown> {
  return { attachmentId: expect.any(String), ...file, size: bytes.length, sha256: sha256(bytes) };
}
