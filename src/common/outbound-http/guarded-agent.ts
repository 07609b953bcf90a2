import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import type { Duplex } from 'node:stream';
import type { AddressPolicy } from './address-policy';
import type { DnsResolver, ResolvedAddress } from './dns-resolver';
import { DestinationRefusedError } from './outbound-errors';

export interface ConnectGuard {
  policy: Pick<AddressPolicy, 'refusalFor'>;
  /** The destination is in WORKFLOW_API_ALLOWED_HOSTS: resolve it, but do not judge its addresses. */
  exempt: boolean;
}

/** How long a kept-alive socket may sit idle (Node's default agent uses the same; a server's shorter `Keep-Alive: timeout` wins). */
const IDLE_SOCKET_MS = 5000;
/**
 * The TCP keep-alive delay axios's HTTP adapter gives every request's socket. A kept-alive agent sets
 * its own (`keepAliveMsecs`) whenever a socket goes back to it; with two different values each
 * request changed the socket's options twice (system calls, about 25 us per request), with the same
 * value Node sets them once per socket.
 */
const AXIOS_TCP_KEEPALIVE_MS = 60_000;
/** Destinations whose agents are kept; the least recently used one beyond it is dropped. */
const MAX_AGENTS = 64;

/**
 * The addresses a request to `host` may connect to: an IP literal as it is, a name resolved once.
 * Refused (DestinationRefusedError) when ANY address is refused, unless the destination is exempt.
 */
export async function checkedAddresses(
  guard: ConnectGuard & { resolve: DnsResolver },
  host: string,
): Promise<ResolvedAddress[]> {
  const family = isIP(host);
  const addresses = family !== 0 ? [{ address: host, family }] : await guard.resolve(host);
  const error = refusal(guard, host, addresses);
  if (error) throw error;
  if (addresses.length === 0) throw notFound(host);
  return addresses;
}

/**
 * A `lookup` for `net.connect` that answers only addresses checked before: the connection goes to
 * exactly those (pinned: there is no second resolution a rebinding DNS server could answer
 * differently). They are judged again, so the agent never connects anywhere refused.
 */
export function pinnedLookup(guard: ConnectGuard, addresses: ResolvedAddress[]): LookupFunction {
  return (hostname, options, callback) => {
    const error = refusal(guard, hostname, addresses);
    if (error) return callback(error, '');
    const wanted = addresses.filter((a) => familyMatches(a, options.family));
    if (wanted.length === 0) return callback(notFound(hostname), '');
    if (options.all) return callback(null, wanted);
    callback(null, wanted[0].address, wanted[0].family);
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

function agentOptions(guard: ConnectGuard, addresses: ResolvedAddress[]): http.AgentOptions {
  return {
    keepAlive: true,
    keepAliveMsecs: AXIOS_TCP_KEEPALIVE_MS,
    timeout: IDLE_SOCKET_MS,
    lookup: pinnedLookup(guard, addresses),
  };
}

/** A keep-alive agent for `protocol` whose connections go only to `addresses` (checked), through the guard. */
export function createGuardedAgent(
  protocol: 'http:' | 'https:',
  guard: ConnectGuard,
  addresses: ResolvedAddress[],
): http.Agent {
  const options = agentOptions(guard, addresses);
  const agent = protocol === 'https:' ? new https.Agent(options) : new http.Agent(options);
  // The agent calls its own createConnection (https's opens TLS): wrapped on the instance, so one
  // guard serves both kinds of agent.
  const connect = agent.createConnection.bind(agent);
  agent.createConnection = (connection: ConnectionOptions, callback?: ConnectionCallback) => {
    const error = literalRefusal(guard, connection.host);
    if (error) {
      callback?.(error, undefined as unknown as Duplex);
      return undefined;
    }
    return connect(connection, callback);
  };
  return agent;
}

/**
 * Keep-alive agents, one per destination (scheme, host, port) and set of checked addresses. Every
 * request resolves and checks its host first and then takes the agent of exactly what it checked,
 * so a kept-alive socket is reused only for the host it was opened for, and only while that host
 * still resolves to the address it is connected to; a host that now resolves elsewhere (refused, or
 * rebound) gets a new agent, or nothing.
 */
export class GuardedAgents {
  private readonly agents = new Map<string, http.Agent>();

  constructor(private readonly maxAgents = MAX_AGENTS) {}

  for(
    protocol: 'http:' | 'https:',
    destination: { host: string; port: number },
    guard: ConnectGuard,
    addresses: ResolvedAddress[],
  ): http.Agent {
    const key = `${protocol}//${destination.host}:${destination.port} ${addresses.map((a) => a.address).join(' ')}`;
    let agent = this.agents.get(key);
    if (agent) {
      this.agents.delete(key); // most recently used last
    } else {
      agent = createGuardedAgent(protocol, guard, addresses);
      this.evictBeyond(this.maxAgents - 1);
    }
    this.agents.set(key, agent);
    return agent;
  }

  /** Closes every socket (in use too): at shutdown. */
  destroy(): void {
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
  }

  /** Drops the least recently used agents; their idle sockets close now, busy ones once idle. */
  private evictBeyond(size: number): void {
    for (const [key, agent] of this.agents) {
      if (this.agents.size <= size) return;
      this.agents.delete(key);
      for (const sockets of Object.values(agent.freeSockets))
        for (const socket of sockets ?? []) socket.destroy();
    }
  }
}
