/** Stands for every origin: the value is no secret (a base URL, a tenant name) and may go anywhere. */
export const ANY_ORIGIN = '*';

/**
 * WORKFLOW_ENV_ORIGINS: for each allow-listed env name, the origins its value may be sent to by an
 * outbound step (modelled on n8n's per-credential allowed domains). Entries are comma-separated,
 * `NAME=origin origin ...` (origins separated by spaces), an origin is `scheme://host[:port]`
 * (http or https, no path), or `*` alone for anywhere. A name without an entry may be sent nowhere.
 * Origins are kept as `URL.origin` writes them (lower-case host, default port dropped).
 */
export function workflowEnvOriginsOf(
  raw: string | undefined,
  allowlist: readonly string[],
  problems: string[],
): ReadonlyMap<string, readonly string[]> {
  const bindings = new Map<string, readonly string[]>();
  const entries = (raw ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  for (const entry of entries) {
    const equals = entry.indexOf('=');
    const name = equals === -1 ? '' : entry.slice(0, equals).trim();
    const origins =
      equals === -1
        ? []
        : entry
            .slice(equals + 1)
            .trim()
            .split(/\s+/)
            .filter(Boolean);
    if (!name || origins.length === 0) {
      problems.push(
        `WORKFLOW_ENV_ORIGINS entry "${entry}" must look like NAME=https://host[:port] (more origins separated by spaces)`,
      );
      continue;
    }
    if (!allowlist.includes(name)) {
      problems.push(`WORKFLOW_ENV_ORIGINS names ${name}, which is not in WORKFLOW_ENV_ALLOWLIST`);
      continue;
    }
    if (bindings.has(name)) {
      problems.push(
        `WORKFLOW_ENV_ORIGINS names ${name} twice (list its origins in one entry, separated by spaces)`,
      );
      continue;
    }
    if (origins.includes(ANY_ORIGIN)) {
      if (origins.length > 1) problems.push(`WORKFLOW_ENV_ORIGINS entry for ${name}: * stands alone`);
      bindings.set(name, [ANY_ORIGIN]);
      continue;
    }
    const normalized: string[] = [];
    for (const origin of origins) {
      const parsed = parseOrigin(origin);
      if (parsed === null)
        problems.push(
          `WORKFLOW_ENV_ORIGINS entry for ${name}: "${origin}" is not an origin like https://crm.example.com or http://10.0.0.5:8080 (no path, no user)`,
        );
      else normalized.push(parsed);
    }
    bindings.set(name, [...new Set(normalized)]);
  }
  return bindings;
}

/** `scheme://host[:port]` of http or https and nothing more, as `URL.origin` writes it; else null. */
function parseOrigin(text: string): string | null {
  try {
    const url = new URL(text);
    const bare = url.pathname === '/' && !url.search && !url.hash && !url.username && !url.password;
    if (!['http:', 'https:'].includes(url.protocol) || !bare || !/^https?:\/\/[^/?#]+\/?$/i.test(text))
      return null;
    return url.origin;
  } catch {
    return null;
  }
}
