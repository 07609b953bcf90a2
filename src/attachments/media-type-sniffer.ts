import { loadEsm } from 'load-esm';

type FileTypeModule = typeof import('file-type');

/** Bytes of a file's start the sniffer looks at (file-type reads at most this much of a buffer for most types). */
export const SNIFF_BYTES = 64 * 1024;

let fileType: Promise<FileTypeModule> | undefined;

/**
 * The media type of a file from its own bytes, never from what the client says: file-type's
 * signatures (images, PDF, office documents, archives, audio, video); a start that is valid UTF-8
 * without NUL characters is `text/plain`; anything else `application/octet-stream`. file-type is
 * ESM-only: it is loaded once through load-esm (the loader @nestjs/common uses for it).
 */
export async function sniffMediaType(head: Buffer): Promise<string> {
  fileType ??= loadEsm<FileTypeModule>('file-type');
  const detected = await (await fileType).fileTypeFromBuffer(head);
  if (detected) return detected.mime;
  return looksLikeText(head) ? 'text/plain' : 'application/octet-stream';
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
