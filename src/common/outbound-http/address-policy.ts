import ipaddr from 'ipaddr.js';

/** Why an address may not be contacted, or null when it may. */
export type Refusal = string | null;

const METADATA_ADDRESSES = new Set(['169.254.169.254', 'fd00:ec2::254']);

/** IPv4 ranges ipaddr.js names that may be contacted; everything else is refused. */
const ALLOWED_IPV4_RANGES = new Set<string>(['unicast']);

/** Global unicast IPv6 space (2000::/3); anything outside it that is not an IPv4 embedding is refused. */
const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR('2000::/3');

/**
 * Decides whether an IP address may be contacted by an outbound request: only public unicast
 * addresses may. IPv6 forms that embed an IPv4 address (mapped, compatible, translated, NAT64,
 * 6to4, Teredo) are judged by the IPv4 address they carry.
 */
export function refusalFor(address: string): Refusal {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(stripBrackets(address));
  } catch {
    return 'not an IP address';
  }
  return parsed.kind() === 'ipv4' ? refusalForV4(parsed as ipaddr.IPv4) : refusalForV6(parsed as ipaddr.IPv6);
}

function refusalForV4(address: ipaddr.IPv4): Refusal {
  if (METADATA_ADDRESSES.has(address.toString())) return 'metadata';
  const range = address.range();
  return ALLOWED_IPV4_RANGES.has(range) ? null : range;
}

function refusalForV6(address: ipaddr.IPv6): Refusal {
  if (METADATA_ADDRESSES.has(address.toString())) return 'metadata';
  const range = address.range();
  const parts = address.parts;
  switch (range) {
    case 'ipv4Mapped': // ::ffff:a.b.c.d
    case 'rfc6145': // ::ffff:0:a.b.c.d
      return embedded(range, low32(parts));
    case 'rfc6052': // 64:ff9b::a.b.c.d (NAT64); the local-use 64:ff9b:1::/48 is refused outright
      return parts[2] === 0 && parts[3] === 0 && parts[4] === 0 && parts[5] === 0
        ? embedded(range, low32(parts))
        : range;
    case '6to4': // 2002:AABB:CCDD::/48
      return embedded(range, [parts[1] >> 8, parts[1] & 0xff, parts[2] >> 8, parts[2] & 0xff]);
    case 'teredo': // 2001:0:SSSS:SSSS:flags:port:~CCCC:~CCCC
      return (
        embedded(range, [parts[2] >> 8, parts[2] & 0xff, parts[3] >> 8, parts[3] & 0xff]) ??
        embedded(
          range,
          low32(parts).map((octet) => octet ^ 0xff),
        )
      );
    case 'unicast':
      break;
    default:
      return range;
  }
  // IPv4-compatible ::a.b.c.d (deprecated, but some stacks still route it).
  if (parts.slice(0, 6).every((part) => part === 0)) return embedded('ipv4Compatible', low32(parts));
  return address.match(GLOBAL_UNICAST_V6) ? null : 'reserved';
}

function low32(parts: number[]): number[] {
  return [parts[6] >> 8, parts[6] & 0xff, parts[7] >> 8, parts[7] & 0xff];
}

function embedded(form: string, octets: number[]): Refusal {
  const inner = refusalForV4(new ipaddr.IPv4(octets));
  return inner === null ? null : `${form} ${inner}`;
}

function stripBrackets(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/**
 * A host as written in a URL or in WORKFLOW_API_ALLOWED_HOSTS, compared textually: lower-cased,
 * without brackets or a trailing dot, IP literals in their canonical form. An IPv4-mapped spelling
 * is NOT the same host as its IPv4 address.
 */
export function normaliseHost(host: string): string {
  const bare = stripBrackets(host.trim().toLowerCase()).replace(/\.$/, '');
  return bare.includes(':') && ipaddr.IPv6.isValid(bare) ? ipaddr.IPv6.parse(bare).toString() : bare;
}

interface AllowedHost {
  host: string;
  /** Undefined: any port. */
  port?: number;
}

/** Parses `host`, `host:port`, `[v6]`, `[v6]:port` or a bare IPv6 address. */
function parseAllowedHost(entry: string): AllowedHost {
  const value = entry.trim().toLowerCase();
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(value);
  if (bracketed) return { host: normaliseHost(bracketed[1]), port: toPort(bracketed[2]) };
  const withPort = /^([^:]+):(\d+)$/.exec(value);
  if (withPort) return { host: normaliseHost(withPort[1]), port: toPort(withPort[2]) };
  return { host: normaliseHost(value) };
}

function toPort(raw: string | undefined): number | undefined {
  return raw === undefined ? undefined : Number(raw);
}

/** The SSRF policy of outbound requests (the `api` step, webhooks): the address rules plus the WORKFLOW_API_ALLOWED_HOSTS exemptions. */
export class AddressPolicy {
  private readonly allowed: AllowedHost[];

  constructor(allowedHosts: readonly string[] = []) {
    this.allowed = allowedHosts.filter((entry) => entry.trim() !== '').map(parseAllowedHost);
  }

  /** Whether `host:port` (as in the URL; the port already defaulted from the scheme) is exempt. */
  isExempt(host: string, port: number): boolean {
    const normalised = normaliseHost(host);
    return this.allowed.some((entry) => entry.host === normalised && (entry.port ?? port) === port);
  }

  /** Why the address may not be contacted, or null. */
  refusalFor(address: string): Refusal {
    return refusalFor(address);
  }
}
