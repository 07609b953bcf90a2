import { isEmail } from 'class-validator';

/** More recipients than this in one `to` is refused: a templated address must not become a mailing list. */
export const MAX_RECIPIENTS = 50;

export type RecipientList =
  { ok: true; addresses: string[] } | { ok: false; reason: string; invalid?: string[] };

/**
 * Reads a rendered `to`: one address, several separated by commas (or semicolons), or an array of
 * them (a single-token template such as `{{input.emails}}` keeps an array's type). Only bare
 * addresses (`a@example.com`) are accepted: no display names, no line breaks, nothing a header could
 * be smuggled through.
 */
export function parseRecipients(value: unknown): RecipientList {
  const parts = (Array.isArray(value) ? value : [value]).flatMap((item) =>
    typeof item === 'string' ? item.split(/[,;]/) : [item],
  );
  const addresses: string[] = [];
  const invalid: string[] = [];
  for (const part of parts) {
    if (typeof part === 'string' && part.trim() === '') continue;
    const address = typeof part === 'string' ? part.trim() : undefined;
    if (address && address.length <= 254 && isEmail(address)) addresses.push(address);
    else invalid.push(typeof part === 'string' ? part.slice(0, 100) : String(typeof part));
  }
  if (invalid.length > 0) return { ok: false, reason: 'not an e-mail address', invalid };
  if (addresses.length === 0) return { ok: false, reason: 'no recipient' };
  if (addresses.length > MAX_RECIPIENTS)
    return { ok: false, reason: `more than ${MAX_RECIPIENTS} recipients` };
  return { ok: true, addresses: [...new Set(addresses)] };
}
