import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** A template name is a file name without extension: letters, digits, `-`, `_` (no path, no dots). */
export const MAIL_TEMPLATE_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const MAX_TEMPLATE_BYTES = 256 * 1024;

/** `i18n/templates`, from the working directory so the compiled `dist/` finds the same files. */
export function mailTemplatesDir(): string {
  return join(process.cwd(), 'i18n', 'templates');
}

/** The file of a named template (`i18n/templates/<name>.html`), or null for a name that is not allowed. */
export function mailTemplatePath(name: string): string | null {
  return typeof name === 'string' && MAIL_TEMPLATE_NAME.test(name)
    ? join(mailTemplatesDir(), `${name}.html`)
    : null;
}

export function mailTemplateExists(name: string): boolean {
  const path = mailTemplatePath(name);
  return path !== null && existsSync(path);
}

/** Reads a named template's text (trusted admin text: the notify step renders it with HTML-escaped values). */
export async function readMailTemplate(name: string): Promise<string> {
  const path = mailTemplatePath(name);
  if (path === null) throw new Error(`"${name}" is not a template name`);
  const text = await readFile(path, 'utf8');
  if (Buffer.byteLength(text) > MAX_TEMPLATE_BYTES) throw new Error(`Template "${name}" is too large`);
  return text;
}
