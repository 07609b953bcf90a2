import { lookup } from 'node:dns/promises';

export interface ResolvedAddress {
  address: string;
  /** 4 or 6. */
  family: number;
}

/** Resolves a host name to every address it has; the outbound guard checks each of them. */
export type DnsResolver = (hostname: string) => Promise<ResolvedAddress[]>;

/** Injection token of the resolver used by `OutboundHttpService`; tests provide their own. */
export const OUTBOUND_DNS_RESOLVER = Symbol('OUTBOUND_DNS_RESOLVER');

/** The system resolver (getaddrinfo, so /etc/hosts and `localhost` behave as everywhere else). */
export const systemDnsResolver: DnsResolver = (hostname) => lookup(hostname, { all: true });
