import type { Readable } from 'node:stream';
import { OutboundHttpError } from './outbound-http.error';
import { OutboundErrorCode } from './outbound-errors';

/**
 * Reads a response body, failing as soon as it passes `maxBytes` (the rest is never read); with
 * `truncate`, the first `maxBytes` are the body instead.
 */
export async function readCapped(stream: Readable, maxBytes: number, truncate = false): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of stream as AsyncIterable<Buffer | string>) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    total += buffer.length;
    if (total > maxBytes && truncate) {
      stream.destroy();
      chunks.push(buffer.subarray(0, buffer.length - (total - maxBytes)));
      break;
    }
    if (total > maxBytes) {
      stream.destroy();
      throw new OutboundHttpError(`The response is larger than ${maxBytes} bytes`, {
        code: OutboundErrorCode.RESPONSE_TOO_LARGE,
        details: { maxResponseBytes: maxBytes },
      });
    }
    chunks.push(buffer);
  }
  return Buffer.concat(chunks);
}

/** JSON when the content type says so (`application/json`, `application/*+json`), else text. */
export function decodeBody(body: Buffer, contentType: string | undefined): unknown {
  const [mediaType, ...params] = (contentType ?? '').split(';').map((part) => part.trim().toLowerCase());
  const charset = params
    .find((param) => param.startsWith('charset='))
    ?.slice('charset='.length)
    .replace(/"/g, '');
  const text = decodeText(body, charset);
  if (!isJson(mediaType)) return text;
  if (text.trim() === '') return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function isJson(mediaType: string): boolean {
  return /^application\/(?:[\w.-]+\+)?json$/.test(mediaType) || mediaType === 'text/json';
}

function decodeText(body: Buffer, charset: string | undefined): string {
  try {
    return new TextDecoder(charset || 'utf-8').decode(body);
  } catch {
    return new TextDecoder('utf-8').decode(body);
  }
}
