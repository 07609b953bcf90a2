/** PostgreSQL's text of a WAL position (`pg_lsn`): two hexadecimal halves, "16/B374D848". */
const WAL_POSITION = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/;

/** A WAL position as a number that compares like the position itself; null when the text is not one. */
export function parseWalPosition(text: string): bigint | null {
  const match = WAL_POSITION.exec(text.trim());
  if (!match) return null;
  return (BigInt(`0x${match[1]}`) << 32n) | BigInt(`0x${match[2]}`);
}

/** The text PostgreSQL itself writes for a position (upper-case halves without leading zeros). */
export function formatWalPosition(position: bigint): string {
  const high = position >> 32n;
  const low = position & 0xffffffffn;
  return `${high.toString(16).toUpperCase()}/${low.toString(16).toUpperCase()}`;
}
