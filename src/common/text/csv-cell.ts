/**
 * Quotes a CSV cell containing a comma, double quote, CR or LF, doubling inner quotes: exactly the
 * cells PostgreSQL's COPY (FORMAT csv) quotes, but for the empty string, which COPY writes as `""`.
 */
export function csvCell(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}
