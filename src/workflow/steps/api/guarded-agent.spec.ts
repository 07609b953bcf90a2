import http from 'node:http';
import type { LookupAddress } from 'node:dns';
import { startHttpServer, type HttpTestServer } from '../../../../test/utils/http-test-server';
import { AddressPolicy } from './address-policy';
import type { DnsResolver } from './dns-resolver';
import { createGuardedAgent, guardedLookup, type ConnectGuard } from './guarded-agent';
import { DestinationRefusedError } from './outbound-errors';

/** Calls a lookup function as node:net does and gives back what it answered. */
function lookup(
  guard: ConnectGuard,
  hostname: string,
  options: { all?: boolean; family?: number } = {},
): Promise<{ error: Error | null; address: string | LookupAddress[]; family?: number }> {
  return new Promise((resolve) => {
    guardedLookup(guard)(hostname, options, (error, address, family) => resolve({ error, address, family }));
  });
}

function resolverOf(addresses: Record<string, string[]>, calls: string[] = []): DnsResolver {
  return async (hostname) => {
    calls.push(hostname);
    const found = addresses[hostname];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
}

describe('guardedLookup (no socket involved)', () => {
  const policy = new AddressPolicy();
  const dns = {
    'public.test': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
    'mixed.test': ['93.184.216.34', '10.0.0.5'],
    'metadata.test': ['169.254.169.254'],
    'v6only.test': ['2606:2800:220:1:248:1893:25c8:1946'],
  };

  it('answers the checked addresses, resolving once', async () => {
    const calls: string[] = [];
    const guard = { policy, exempt: false, resolve: resolverOf(dns, calls) };
    expect(await lookup(guard, 'public.test', { all: true })).toEqual({
      error: null,
      address: [
        { address: '93.184.216.34', family: 4 },
        { address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 },
      ],
      family: undefined,
    });
    expect(await lookup(guard, 'public.test', { family: 6 })).toEqual({
      error: null,
      address: '2606:2800:220:1:248:1893:25c8:1946',
      family: 6,
    });
    expect(calls).toEqual(['public.test', 'public.test']);
  });

  it('refuses a name when any of its addresses is refused', async () => {
    const guard = { policy, exempt: false, resolve: resolverOf(dns) };
    const { error } = await lookup(guard, 'mixed.test', { all: true });
    expect(error).toBeInstanceOf(DestinationRefusedError);
    expect(error).toMatchObject({ host: 'mixed.test', address: '10.0.0.5', reason: 'private' });
    expect((await lookup(guard, 'metadata.test')).error).toMatchObject({ reason: 'metadata' });
  });

  it('does not judge the addresses of an exempt host', async () => {
    const guard = { policy, exempt: true, resolve: resolverOf(dns) };
    expect(await lookup(guard, 'mixed.test')).toEqual({ error: null, address: '93.184.216.34', family: 4 });
  });

  it('passes resolver failures on, and reports no address of the wanted family as ENOTFOUND', async () => {
    const guard = { policy, exempt: false, resolve: resolverOf(dns) };
    expect((await lookup(guard, 'nowhere.test')).error).toMatchObject({ code: 'ENOTFOUND' });
    expect((await lookup(guard, 'v6only.test', { family: 4 })).error).toMatchObject({ code: 'ENOTFOUND' });
  });
});

describe('createGuardedAgent with plain node:http (the check happens at connect time)', () => {
  let refused: HttpTestServer;
  let allowed: HttpTestServer;

  beforeAll(async () => {
    refused = await startHttpServer('127.0.0.2');
    allowed = await startHttpServer('127.0.0.1');
  });
  afterAll(async () => {
    await Promise.all([refused.close(), allowed.close()]);
  });

  function get(url: string, guard: ConnectGuard): Promise<number> {
    const agent = createGuardedAgent('http:', guard);
    return new Promise<number>((resolve, reject) => {
      http
        .get(url, { agent }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        })
        .on('error', reject);
    }).finally(() => agent.destroy());
  }

  const resolve = resolverOf({ 'internal.test': ['127.0.0.2'] });

  it('refuses an IP literal (node:net skips lookup for those)', async () => {
    const guard = { policy: new AddressPolicy(), exempt: false, resolve };
    await expect(get(refused.url(), guard)).rejects.toBeInstanceOf(DestinationRefusedError);
    expect(refused.connections).toBe(0);
  });

  it('refuses a name resolving to a refused address', async () => {
    const guard = { policy: new AddressPolicy(), exempt: false, resolve };
    await expect(get(`http://internal.test:${refused.port}/`, guard)).rejects.toMatchObject({
      address: '127.0.0.2',
      reason: 'loopback',
    });
    expect(refused.connections).toBe(0);
  });

  it('connects to the resolved address when the host is exempt', async () => {
    const guard = { policy: new AddressPolicy(), exempt: true, resolve };
    expect(await get(`http://internal.test:${refused.port}/`, guard)).toBe(200);
    expect(await get(allowed.url(), guard)).toBe(200);
    expect(refused.requests[0].headers.host).toBe(`internal.test:${refused.port}`);
  });
});
