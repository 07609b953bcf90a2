import { parseContextPath, readSegments } from './context-path';

const TOKEN = /\{\{\s*([^{}]*?)\s*\}\}/g;
const SINGLE_TOKEN = /^\{\{\s*([^{}]*?)\s*\}\}$/;

export interface TemplateScope {
  [root: string]: unknown;
}

export interface TemplateEnv {
  /** Names readable as `{{env.NAME}}` (WORKFLOW_ENV_ALLOWLIST). */
  allowlist: ReadonlySet<string>;
  /** Where the values come from (process.env). */
  values: Record<string, string | undefined>;
}

/** The problems of every `{{ path }}` in a text, checked when a definition is saved. */
export function templateProblems(text: string, envAllowlist: ReadonlySet<string>): string[] {
  const problems: string[] = [];
  for (const [, path] of text.matchAll(TOKEN)) {
    const parsed = parseContextPath(path);
    if ('problem' in parsed) problems.push(parsed.problem);
    else if (
      parsed.segments[0] === 'env' &&
      (parsed.segments.length !== 2 || !envAllowlist.has(parsed.segments[1]))
    )
      problems.push(`{{${path}}} is not in WORKFLOW_ENV_ALLOWLIST`);
  }
  return problems;
}

/** The env names a text's placeholders read (`{{env.NAME}}`), in order, each once. */
export function envNamesIn(text: string): string[] {
  const names = new Set<string>();
  for (const [, path] of text.matchAll(TOKEN)) {
    const parsed = parseContextPath(path);
    if (!('problem' in parsed) && parsed.segments[0] === 'env' && parsed.segments.length === 2)
      names.add(parsed.segments[1]);
  }
  return [...names];
}

/** Whether a text has a placeholder reading `env` at all (any path below it, valid or not). */
export function hasEnvPlaceholder(text: string): boolean {
  for (const [, path] of text.matchAll(TOKEN)) if (path.split('.')[0] === 'env') return true;
  return false;
}

/** A piece of a template: literal text, or the path of a `{{ path }}` placeholder. */
export type TemplatePart = { text: string } | { path: string };

/** A template cut into its literal texts and placeholders, in order. */
export function templateParts(text: string): TemplatePart[] {
  const parts: TemplatePart[] = [];
  let at = 0;
  for (const match of text.matchAll(TOKEN)) {
    if (match.index > at) parts.push({ text: text.slice(at, match.index) });
    parts.push({ path: match[1] });
    at = match.index + match[0].length;
  }
  if (at < text.length) parts.push({ text: text.slice(at) });
  return parts;
}

function resolve(path: string, scope: TemplateScope, env: TemplateEnv): unknown {
  const parsed = parseContextPath(path);
  // Definitions are checked when saved; a path refused here reads as missing, never as code.
  if ('problem' in parsed) return undefined;
  const [root, ...rest] = parsed.segments;
  if (root === 'env') {
    const name = rest[0];
    if (rest.length !== 1 || !env.allowlist.has(name)) return undefined;
    return env.values[name];
  }
  return readSegments(scope[root], rest);
}

/** A value as text inside a longer string: missing is empty, objects are JSON. */
export function asText(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return value.toString();
  return JSON.stringify(value) ?? '';
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * Renders `{{ path }}` placeholders. A string that is exactly one placeholder keeps the value's
 * type (null when missing); inside a longer string values are written as text (objects as JSON,
 * missing as empty). Nothing is evaluated: a placeholder is a path, read through own properties.
 */
export function renderTemplate(
  text: string,
  scope: TemplateScope,
  env: TemplateEnv,
  options: { escape?: 'html' } = {},
): unknown {
  const single = SINGLE_TOKEN.exec(text);
  if (single && !options.escape) return resolve(single[1], scope, env) ?? null;
  return text.replace(TOKEN, (_, path: string) => {
    const value = asText(resolve(path, scope, env));
    return options.escape === 'html' ? escapeHtml(value) : value;
  });
}

/** Renders every string inside a value (objects and arrays walked), except the paths in `raw`. */
export function renderDeep(
  value: unknown,
  scope: TemplateScope,
  env: TemplateEnv,
  raw: ReadonlySet<string> = new Set(),
  at = '',
): unknown {
  if (raw.has(at)) return value;
  if (typeof value === 'string') return renderTemplate(value, scope, env);
  if (Array.isArray(value))
    return value.map((item, i) => renderDeep(item, scope, env, raw, `${at}${at ? '.' : ''}${i}`));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value))
      out[key] = renderDeep(item, scope, env, raw, at ? `${at}.${key}` : key);
    return out;
  }
  return value;
}

/** Every string inside a value with its path (`url`, `headers.Authorization`), for definition checks. */
export function stringsOf(value: unknown, at = ''): [string, string][] {
  if (typeof value === 'string') return [[at, value]];
  if (Array.isArray(value)) return value.flatMap((item, i) => stringsOf(item, `${at}[${i}]`));
  if (value && typeof value === 'object')
    return Object.entries(value).flatMap(([key, item]) => stringsOf(item, at ? `${at}.${key}` : key));
  return [];
}
