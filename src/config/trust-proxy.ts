import { isIP } from 'node:net';
import type { AppConfig } from './app-config.model';

/** Named ranges Fastify's `trustProxy` (proxy-addr) understands besides addresses and CIDRs. */
const PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

function isProxyAddress(entry: string): boolean {
  if (PROXY_RANGE_NAMES.includes(entry)) return true;
  const [address, prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

/**
 * TRUST_PROXY: unset/false/0 = the socket peer is the client; an integer = that many proxies in
 * front; otherwise a list of proxy addresses/CIDRs. `true` is refused: trusting every hop lets a
 * client choose its own address (and so its rate-limit identity) by sending X-Forwarded-For.
 */
export function trustProxyOf(raw: string | undefined, problems: string[]): AppConfig['trustProxy'] {
  const lower = raw?.toLowerCase();
  if (lower === undefined || lower === 'false' || lower === 'no' || lower === '0') return false;
  if (lower === 'true' || lower === 'yes') {
    problems.push(
      'TRUST_PROXY=true would trust every X-Forwarded-For hop, so any client could pick its own address ' +
        'and escape the rate limits; set the number of proxies in front of the service (e.g. TRUST_PROXY=1) ' +
        'or their addresses/CIDRs (e.g. TRUST_PROXY=10.0.0.0/8,127.0.0.1)',
    );
    return false;
  }
  if (/^\d+$/.test(lower)) {
    if (Number(lower) > 100) problems.push(`TRUST_PROXY hop count must be at most 100 (got "${raw}")`);
    return Number(lower);
  }
  const entries = lower
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
  const bad = entries.filter((entry) => !isProxyAddress(entry));
  if (bad.length > 0) {
    problems.push(
      `TRUST_PROXY must be false, a hop count or a comma-separated list of proxy addresses/CIDRs ` +
        `(got "${bad.join(', ')}")`,
    );
    return false;
  }
  return entries;
}
