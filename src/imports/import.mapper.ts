import type { ImportDto } from './dto/import.dto';
import type { ImportRow, Refusal } from './imports.repository';

export const REFUSALS_SHOWN = 1000;

export const importPath = (id: string) => `/api/data/imports/${id}`;

/** An import as the API returns it, with its first refusals (at most REFUSALS_SHOWN + 1 are passed). */
export function toImportResponse(row: ImportRow, refusals: Refusal[]): ImportDto {
  return {
    id: row.id,
    configId: row.configId,
    status: row.status,
    mode: row.mode,
    format: row.format,
    rowsRead: row.rowsRead,
    rowsStored: row.rowsStored,
    rowsRefused: row.rowsRefused,
    refusals: refusals.slice(0, REFUSALS_SHOWN),
    refusalsTruncated: refusals.length > REFUSALS_SHOWN,
    refusalsCsv: `${importPath(row.id)}/refusals`,
    error: row.error ? { code: String(row.error.code) } : null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    finishedAt: row.finishedAt ? row.finishedAt.toISOString() : null,
  };
}
