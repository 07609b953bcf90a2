import { createHash } from 'node:crypto';

/**
 * A run id made from what caused the run (a name-based UUID, version 5 layout): the same inputs give
 * the same id, so the run is made once however often its cause is handled (a bulk operation taken
 * over after a crash, an event handed out twice).
 */
export function derivedRunId(cause: string, key: string): string {
  const hex = createHash('sha1').update(`${cause}:${key}`).digest('hex').slice(0, 32).split('');
  hex[12] = '5';
  hex[16] = ((parseInt(hex[16], 16) & 0x3) | 0x8).toString(16);
  const text = hex.join('');
  return `${text.slice(0, 8)}-${text.slice(8, 12)}-${text.slice(12, 16)}-${text.slice(16, 20)}-${text.slice(20)}`;
}
