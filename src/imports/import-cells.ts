import type { ColumnMapping } from './import-options';

/** How a column's cells become values: by the type the form's schema gives the field. */
type CellKind = 'text' | 'number' | 'boolean' | 'json';

export interface ImportColumn {
  /** The position of the column in a row. */
  index: number;
  field: string;
  kind: CellKind;
}

export interface CellRules {
  /** The export neutralised formulas with a leading `'` (EXPORT_RAW_CELLS=false): it is taken off again. */
  unneutralise: boolean;
}

const FORMULA_STARTS = new Set(['=', '+', '-', '@', '\t', '\r']);
const NUMBER = /^-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/** Text as the export wrote it back to the value: `'=1+2` (a neutralised formula) is `=1+2`. */
function unneutralised(text: string, rules: CellRules): string {
  return rules.unneutralise && text.length > 1 && text[0] === "'" && FORMULA_STARTS.has(text[1])
    ? text.slice(1)
    : text;
}

function kindOf(property: unknown): CellKind {
  if (property === null || typeof property !== 'object') return 'text';
  const declared = (property as { type?: unknown }).type;
  const types = Array.isArray(declared) ? declared : [declared];
  if (types.includes('object') || types.includes('array')) return 'json';
  if (types.includes('number') || types.includes('integer')) return 'number';
  if (types.includes('boolean')) return 'boolean';
  return 'text';
}

/**
 * The columns of a file from its header row: by `mapping` when it names the header, else the header
 * as the export writes it (the field name; `data.<name>` for a field named like a system column;
 * a neutralised `'` in front), leaving out the system columns (`id`, `createdAt` and their
 * localized workbook labels) and columns mapped to null. Each column is typed by the schema.
 */
export function planColumns(
  headers: readonly string[],
  schema: Record<string, unknown> | null,
  mapping: ColumnMapping | null,
  systemHeaders: ReadonlySet<string>,
  rules: CellRules,
): { columns: ImportColumn[]; duplicate: string | null } {
  const properties = (schema?.properties ?? {}) as Record<string, unknown>;
  const columns: ImportColumn[] = [];
  const seen = new Set<string>();
  for (let index = 0; index < headers.length; index++) {
    const raw = headers[index] ?? '';
    const field = fieldOfHeader(raw, unneutralised(raw, rules), properties, mapping, systemHeaders);
    if (field === null) continue;
    if (seen.has(field)) return { columns, duplicate: field };
    seen.add(field);
    columns.push({ index, field, kind: kindOf(Object.hasOwn(properties, field) ? properties[field] : null) });
  }
  return { columns, duplicate: null };
}

function fieldOfHeader(
  raw: string,
  header: string,
  properties: Record<string, unknown>,
  mapping: ColumnMapping | null,
  systemHeaders: ReadonlySet<string>,
): string | null {
  if (mapping && Object.hasOwn(mapping, raw)) return mapping[raw];
  if (header === '' || systemHeaders.has(header.toLowerCase())) return null;
  if (header.startsWith('data.') && !Object.hasOwn(properties, header)) return header.slice(5);
  return header;
}

/**
 * A cell's value for a field of `kind`: empty is absent (the export writes missing, null and empty
 * text alike); numbers, booleans and JSON (objects, arrays) parsed from their text; a cell that does
 * not parse stays text, so the schema refuses it with its own rule and message, as a create would.
 * Typed workbook cells keep their type where it fits, dates become ISO 8601 text.
 */
export function cellValue(cell: unknown, kind: CellKind, rules: CellRules): unknown {
  if (cell === null || cell === undefined || cell === '') return undefined;
  if (cell instanceof Date) return cell.toISOString();
  if (typeof cell === 'number' || typeof cell === 'boolean') {
    if (kind === 'text') return String(cell);
    return cell;
  }
  // Readers give text, numbers, booleans and dates only; anything else is read as its JSON.
  const text = typeof cell === 'string' ? cell : JSON.stringify(cell);
  switch (kind) {
    case 'number':
      return NUMBER.test(text) ? Number(text) : unneutralised(text, rules);
    case 'boolean': {
      const lower = text.toLowerCase();
      return lower === 'true' ? true : lower === 'false' ? false : text;
    }
    case 'json':
      try {
        return JSON.parse(text) as unknown;
      } catch {
        return text;
      }
    default:
      return unneutralised(text, rules);
  }
}

/** A row's data: the mapped columns' values, in the columns' order; absent cells left out. */
export function rowData(cells: readonly unknown[], columns: readonly ImportColumn[], rules: CellRules) {
  const data: Record<string, unknown> = {};
  for (const column of columns) {
    const value = cellValue(cells[column.index], column.kind, rules);
    if (value === undefined) continue;
    // A column named __proto__ is a plain key, as in a JSON body. Only then defineProperty: it
    // turns the object into a slow dictionary, which every row would pay for in checks and JSON.
    if (column.field === '__proto__')
      Object.defineProperty(data, column.field, {
        value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    else data[column.field] = value;
  }
  return data;
}
