import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import type { Duplex } from 'node:stream';
import type { AddressPolicy } from './address-policy';
import type { DnsResolver, ResolvedAddress } from './dns-resolver';
import { DestinationRefusedError } from './outbound-errors';

export interface ConnectGuard {
  policy: AddressPolicy;
  /** The destination is in WORKFLOW_API_ALLOWED_HOSTS: resolve it, but do not judge its addresses. */
  exempt: boolean;
  resolve: DnsResolver;
}

/**
 * A `lookup` for `net.connect`: resolves the name once, refuses it when ANY of its addresses is
 * refused, and hands the checked addresses to the socket, which connects to exactly those (the
 * address is pinned: there is no second resolution a rebinding DNS server could answer differently).
 */
export function guardedLookup(guard: ConnectGuard): LookupFunction {
  return (hostname, options, callback) => {
    guard.resolve(hostname).then(
      (addresses) => {
        const error = refusal(guard, hostname, addresses);
        if (error) return callback(error, '');
        const wanted = addresses.filter((a) => familyMatches(a, options.family));
        if (wanted.length === 0) return callback(notFound(hostname), '');
        if (options.all) return callback(null, wanted);
        callback(null, wanted[0].address, wanted[0].family);
      },
      (error: NodeJS.ErrnoException) => callback(error, ''),
    );
  };
}

function refusal(guard: ConnectGuard, hostname: string, addresses: ResolvedAddress[]): Error | null {
  if (guard.exempt) return null;
  for (const { address } of addresses) {
    const reason = guard.policy.refusalFor(address);
    if (reason !== null) return new DestinationRefusedError(hostname, address, reason);
  }
  return null;
}

function familyMatches(address: ResolvedAddress, family: number | string | undefined): boolean {
  if (family === 4 || family === 'IPv4') return address.family === 4;
  if (family === 6 || family === 'IPv6') return address.family === 6;
  return true;
}

function notFound(hostname: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname });
}

/** Node connects to an IP-literal host without calling `lookup`: judge the literal here instead. */
function literalRefusal(guard: ConnectGuard, host: string | null | undefined): Error | null {
  if (guard.exempt || !host || isIP(host) === 0) return null;
  const reason = guard.policy.refusalFor(host);
  return reason === null ? null : new DestinationRefusedError(host, host, reason);
}

type ConnectionOptions = Parameters<http.Agent['createConnection']>[0];
type ConnectionCallback = Parameters<http.Agent['createConnection']>[1];

class GuardedHttpAgent extends http.Agent {
  constructor(private readonly guard: ConnectGuard) {
    super({ keepAlive: false, lookup: guardedLookup(guard) });
  }

  override createConnection(
    options: ConnectionOptions,
    callback?: ConnectionCallback,
  ): Duplex | null | undefined {
    const error = literalRefusal(this.guard, options.host);
    if (error) {
      callback?.(error, undefined as unknown as Duplex);
      return undefined;
    }
    return super.createConnection(options, callback);
  }
}

class GuardedHttpsAgent extends https.Agent {
  constructor(private readonly guard: ConnectGuard) {
    super({ keepAlive: false, lookup: guardedLookup(guard) });
  }

  override createConnection(
    options: ConnectionOptions,
    callback?: ConnectionCallback,
  ): Duplex | null | undefined {
    const error = literalRefusal(this.guard, options.host);
    if (error) {
      callback?.(error, undefined as unknown as Duplex);
      return undefined;
    }
    return super.createConnection(options, callback);
  }
}

/** A one-request agent for `protocol` whose every connection goes through the guard. */
export function createGuardedAgent(protocol: 'http:' | 'https:', guard: ConnectGuard): http.Agent {
  return protocol === 'https:' ? new GuardedHttpsAgent(guard) : new GuardedHttpAgent(guard);
}
