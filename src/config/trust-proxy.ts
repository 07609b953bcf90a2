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

const ALTERNATIVES =
  'name the proxies in front by address or CIDR (e.g. TRUST_PROXY=10.0.0.0/8,127.0.0.1, or uniquelocal)';

/**
 * TRUST_PROXY: unset/false/0 = the socket peer is the client; otherwise a list of proxy
 * addresses/CIDRs. `true` is refused: trusting every hop lets a client choose its own address (and so
 * its rate-limit identity) by sending X-Forwarded-For. A hop count is refused too: it believes the
 * nearest entries without checking that the connection comes from a proxy, so a client that reaches
 * the service directly writes them itself. Fastify 5.12.1 stopped honouring it for that reason (a
 * number there now trusts nothing, which would put every client behind the proxy in one rate-limit
 * bucket); refusing it at boot says so instead.
 */
export function trustProxyOf(raw: string | undefined, problems: string[]): AppConfig['trustProxy'] {
  const lower = raw?.toLowerCase();
  if (lower === undefined || lower === 'false' || lower === 'no' || lower === '0') return false;
  if (lower === 'true' || lower === 'yes') {
    problems.push(
      'TRUST_PROXY=true would trust every X-Forwarded-For hop, so any client could pick its own address ' +
        `and escape the rate limits; ${ALTERNATIVES}`,
    );
    return false;
  }
  if (/^\d+$/.test(lower)) {
    problems.push(
      `TRUST_PROXY=${raw} (a hop count) would believe the nearest X-Forwarded-For entries from any peer, ` +
        `so a client reaching the service directly could pick its own address; ${ALTERNATIVES}`,
    );
    return false;
  }
  const entries = lower
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
  const bad = entries.filter((entry) => !isProxyAddress(entry));
  if (bad.length > 0) {
    problems.push(
      `TRUST_PROXY must be false or a comma-separated list of proxy addresses/CIDRs ` +
        `(got "${bad.join(', ')}")`,
    );
    return false;
  }
  return entries;
}
