import { escapeHtml } from '../../../mail/mail-text';
import type { WorkflowScope } from '../../sdk';

type Entry = [key: string, value: string];

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The submitted fields: the saved record's `data` once a `save` step ran (what was stored), else the
 * execute body's `input`.
 */
export function submittedFields(scope: Readonly<WorkflowScope>): Record<string, unknown> {
  const saved = scope.savedData?.data;
  if (isPlainObject(saved)) return saved;
  return isPlainObject(scope.input) ? scope.input : {};
}

/** The listed fields in their order (a missing one shows empty), or every own field. */
export function fieldEntries(data: Record<string, unknown>, fields?: string[]): Entry[] {
  const keys = fields && fields.length > 0 ? fields : Object.keys(data);
  return keys.map((key) => [key, formatValue(Object.hasOwn(data, key) ? data[key] : undefined)]);
}

/** Text of one value: strings as they are, objects and arrays as JSON, null and missing as empty. */
export function formatValue(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value);
  if (value instanceof Date) return value.toISOString();
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return '[unserializable]';
  }
}

/** An HTML document with one row per field; every key and value is escaped. */
export function htmlTable(entries: Entry[]): string {
  const rows = entries.map(
    ([key, value]) =>
      `<tr><th align="left" valign="top">${escapeHtml(key)}</th><td>${escapeHtml(value).replace(/\r?\n/g, '<br>')}</td></tr>`,
  );
  return [
    '<!DOCTYPE html>',
    '<html><head><meta charset="utf-8"></head><body>',
    '<table border="1" cellpadding="4" cellspacing="0">',
    ...rows,
    '</table>',
    '</body></html>',
  ].join('\n');
}

/** `key: value` lines. */
export function plainText(entries: Entry[]): string {
  return entries.map(([key, value]) => `${key}: ${value}`).join('\n') + '\n';
}
