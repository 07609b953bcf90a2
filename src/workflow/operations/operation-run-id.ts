import { createHash } from 'node:crypto';

/**
 * The id of the run an operation makes for one of its matched runs (a re-run): the same at every
 * attempt (a name-based UUID, version 5 layout), so a repeat after a crash finds it already made.
 */
export function operationRunId(operationId: string, runId: string): string {
  const hex = createHash('sha1').update(`${operationId}:${runId}`).digest('hex').slice(0, 32).split('');
  hex[12] = '5';
  hex[16] = ((parseInt(hex[16], 16) & 0x3) | 0x8).toString(16);
  const text = hex.join('');
  return `${text.slice(0, 8)}-${text.slice(8, 12)}-${text.slice(12, 16)}-${text.slice(16, 20)}-${text.slice(20)}`;
}
