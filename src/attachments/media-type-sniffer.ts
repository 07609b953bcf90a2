import { loadEsm } from 'load-esm';

type FileTypeModule = typeof import('file-type');

/** Bytes of a file's start the sniffer looks at (file-type reads at most this much of a buffer for most types). */
export const SNIFF_BYTES = 64 * 1024;

/**
 * Formats file-type recognizes whose files can be text from their first byte on: a text start keeps
 * these answers. Any other signature found in a text start is a coincidence of its first bytes (`BM`
 * opens a bitmap, `MZ` a Windows program, a `G` every 188 bytes a transport stream), since a real
 * file of those formats has NUL or non-UTF-8 bytes within its first 64 KB.
 */
const TEXT_CAPABLE_TYPES = new Set([
  'application/pdf',
  'application/postscript',
  'application/eps',
  'application/rtf',
  'application/xml',
  'application/x-ms-regedit',
  'application/x-unix-archive',
  'application/x-cpio',
]);

let fileType: Promise<FileTypeModule> | undefined;

/**
 * The media type of a file from its own bytes, never from what the client says: file-type's
 * signatures (images, PDF, office documents, archives, audio, video); a start that is valid UTF-8
 * without NUL characters is `text/plain` unless file-type recognizes a text format in it; anything
 * else `application/octet-stream`. So a text that happens to open with `BM` is not an `image/*`
 * upload. file-type is ESM-only: it is loaded once through load-esm (the loader @nestjs/common
 * uses for it).
 */
export async function sniffMediaType(head: Buffer): Promise<string> {
  fileType ??= loadEsm<FileTypeModule>('file-type');
  const detected = (await (await fileType).fileTypeFromBuffer(head))?.mime;
  if (!looksLikeText(head)) return detected ?? 'application/octet-stream';
  return detected && (detected.startsWith('text/') || TEXT_CAPABLE_TYPES.has(detected))
    ? detected
    : 'text/plain';
}

function looksLikeText(head: Buffer): boolean {
  if (head.includes(0)) return false;
  try {
    // `stream`: a multi-byte character cut at the end of the sample is not a reason to call it binary.
    new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: true });
    return true;
  } catch {
    return false;
  }
}
