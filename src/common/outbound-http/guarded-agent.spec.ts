import http from 'node:http';
import https from 'node:https';
import type { LookupAddress } from 'node:dns';
import { startHttpServer, type HttpTestServer } from '../../../test/utils/http-test-server';
import { AddressPolicy } from './address-policy';
import type { DnsResolver, ResolvedAddress } from './dns-resolver';
import {
  checkedAddresses,
  createGuardedAgent,
  GuardedAgents,
  pinnedLookup,
  type ConnectGuard,
} from './guarded-agent';
import { DestinationRefusedError } from './outbound-errors';

/** Calls a lookup function as node:net does and gives back what it answered. */
function lookup(
  guard: ConnectGuard,
  addresses: ResolvedAddress[],
  hostname: string,
  options: { all?: boolean; family?: number } = {},
): Promise<{ error: Error | null; address: string | LookupAddress[]; family?: number }> {
  return new Promise((resolve) => {
    pinnedLookup(guard, addresses)(hostname, options, (error, address, family) =>
      resolve({ error, address, family }),
    );
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

const v4 = (address: string): ResolvedAddress => ({ address, family: 4 });

describe('checkedAddresses (no socket involved)', () => {
  const policy = new AddressPolicy();
  const dns = {
    'public.test': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
    'mixed.test': ['93.184.216.34', '10.0.0.5'],
    'metadata.test': ['169.254.169.254'],
    'empty.test': [],
  };

  it('answers every address of a name, resolving it once; an IP literal is not resolved', async () => {
    const calls: string[] = [];
    const guard = { policy, exempt: false, resolve: resolverOf(dns, calls) };
    expect(await checkedAddresses(guard, 'public.test')).toEqual([
      { address: '93.184.216.34', family: 4 },
      { address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 },
    ]);
    expect(await checkedAddresses(guard, '93.184.216.34')).toEqual([v4('93.184.216.34')]);
    expect(calls).toEqual(['public.test']);
  });

  it('refuses a name when any of its addresses is refused, and a refused literal', async () => {
    const guard = { policy, exempt: false, resolve: resolverOf(dns) };
    await expect(checkedAddresses(guard, 'mixed.test')).rejects.toMatchObject({
      host: 'mixed.test',
      address: '10.0.0.5',
      reason: 'private',
    });
    await expect(checkedAddresses(guard, 'metadata.test')).rejects.toMatchObject({ reason: 'metadata' });
    await expect(checkedAddresses(guard, '127.0.0.1')).rejects.toBeInstanceOf(DestinationRefusedError);
  });

  it('does not judge the addresses of an exempt host', async () => {
    const guard = { policy, exempt: true, resolve: resolverOf(dns) };
    expect(await checkedAddresses(guard, 'mixed.test')).toHaveLength(2);
  });

  it('passes resolver failures on, and reports a name without addresses as ENOTFOUND', async () => {
    const guard = { policy, exempt: false, resolve: resolverOf(dns) };
    await expect(checkedAddresses(guard, 'nowhere.test')).rejects.toMatchObject({ code: 'ENOTFOUND' });
    await expect(checkedAddresses(guard, 'empty.test')).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });
});

describe('pinnedLookup (no socket involved)', () => {
  const policy = new AddressPolicy();
  const pinned = [v4('93.184.216.34'), { address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 }];

  it('answers the pinned addresses by family, whatever the name', async () => {
    const guard = { policy, exempt: false };
    expect(await lookup(guard, pinned, 'public.test', { all: true })).toEqual({
      error: null,
      address: pinned,
      family: undefined,
    });
    expect(await lookup(guard, pinned, 'public.test', { family: 6 })).toEqual({
      error: null,
      address: '2606:2800:220:1:248:1893:25c8:1946',
      family: 6,
    });
    expect((await lookup(guard, [pinned[1]], 'public.test', { family: 4 })).error).toMatchObject({
      code: 'ENOTFOUND',
    });
  });

  it('judges the pinned addresses again: never hands out a refused one', async () => {
    const { error } = await lookup({ policy, exempt: false }, [v4('10.0.0.5')], 'mixed.test');
    expect(error).toMatchObject({ host: 'mixed.test', address: '10.0.0.5', reason: 'private' });
    expect(await lookup({ policy, exempt: true }, [v4('10.0.0.5')], 'mixed.test')).toEqual({
      error: null,
      address: '10.0.0.5',
      family: 4,
    });
  });
});

describe('guarded keep-alive agents with plain node:http', () => {
  let refused: HttpTestServer;
  let allowed: HttpTestServer;

  beforeAll(async () => {
    refused = await startHttpServer('127.0.0.2');
    allowed = await startHttpServer('127.0.0.1');
  });
  afterAll(async () => {
    await Promise.all([refused.close(), allowed.close()]);
  });
  beforeEach(() => {
    refused.reset();
    allowed.reset();
  });

  function get(url: string, agent: http.Agent): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      http
        .get(url, { agent }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        })
        .on('error', reject);
    });
  }

  it('refuses an IP literal (node:net skips lookup for those)', async () => {
    const agent = createGuardedAgent('http:', { policy: new AddressPolicy(), exempt: false }, [
      v4('127.0.0.2'),
    ]);
    await expect(get(refused.url(), agent)).rejects.toBeInstanceOf(DestinationRefusedError);
    expect(refused.connections).toBe(0);
    agent.destroy();
  });

  it('refuses an IP literal over https before any connection, as over http', async () => {
    const agent = createGuardedAgent('https:', { policy: new AddressPolicy(), exempt: false }, [
      v4('127.0.0.2'),
    ]);
    const refusal = new Promise<unknown>((resolve) => {
      https
        .get(`https://127.0.0.2:${refused.port}/`, { agent }, () => resolve('answered'))
        .on('error', resolve);
    });
    expect(await refusal).toBeInstanceOf(DestinationRefusedError);
    expect(refused.connections).toBe(0);
    agent.destroy();
  });

  it('connects a name to its pinned address, and keeps the connection alive', async () => {
    const agent = createGuardedAgent('http:', { policy: new AddressPolicy(), exempt: true }, [
      v4('127.0.0.2'),
    ]);
    const url = `http://internal.test:${refused.port}/`;
    expect(await get(url, agent)).toBe(200);
    expect(await get(url, agent)).toBe(200);
    expect(refused.requests.map((r) => r.headers.host)).toEqual([
      `internal.test:${refused.port}`,
      `internal.test:${refused.port}`,
    ]);
    expect(refused.connections).toBe(1);
    agent.destroy();
  });

  describe('GuardedAgents: check, then reuse', () => {
    // A policy under which 127.0.0.1 stands for a public address and 127.0.0.2 for a private one.
    const policy = { refusalFor: (address: string) => (address === '127.0.0.1' ? null : 'private') };
    let answers: Record<string, string[]>;
    const resolve: DnsResolver = async (hostname) => (answers[hostname] ?? []).map(v4);

    /** What OutboundHttpService does for each request: resolve and check, then the agent of what was checked. */
    async function send(agents: GuardedAgents, host: string, port: number): Promise<number> {
      const guard = { policy, exempt: false };
      const addresses = await checkedAddresses({ ...guard, resolve }, host);
      return get(`http://${host}:${port}/`, agents.for('http:', { host, port }, guard, addresses));
    }

    it('a kept-alive connection is not reused once its name resolves to a refused address', async () => {
      const agents = new GuardedAgents();
      try {
        answers = { 'rebind.test': ['127.0.0.1'] };
        expect(await send(agents, 'rebind.test', allowed.port)).toBe(200);
        expect(await send(agents, 'rebind.test', allowed.port)).toBe(200);
        expect(allowed.connections).toBe(1);

        // The name now points at a private address: refused before anything is sent, although a
        // connection to the same host and port is open and idle.
        answers = { 'rebind.test': ['127.0.0.2'] };
        await expect(send(agents, 'rebind.test', allowed.port)).rejects.toMatchObject({
          address: '127.0.0.2',
          reason: 'private',
        });
        answers = { 'rebind.test': ['127.0.0.1', '127.0.0.2'] };
        await expect(send(agents, 'rebind.test', allowed.port)).rejects.toBeInstanceOf(
          DestinationRefusedError,
        );
        expect(allowed.requests).toHaveLength(2);
        expect(refused.connections).toBe(0);

        // Back on the checked address, the idle connection serves again.
        answers = { 'rebind.test': ['127.0.0.1'] };
        expect(await send(agents, 'rebind.test', allowed.port)).toBe(200);
        expect(allowed.connections).toBe(1);
      } finally {
        agents.destroy();
      }
    });

    it('a connection is reused only for the host and port it was opened for', async () => {
      const agents = new GuardedAgents();
      try {
        answers = { 'one.test': ['127.0.0.1'], 'two.test': ['127.0.0.1'] };
        expect(await send(agents, 'one.test', allowed.port)).toBe(200);
        expect(await send(agents, 'two.test', allowed.port)).toBe(200);
        expect(await send(agents, 'one.test', allowed.port)).toBe(200);
        expect(allowed.connections).toBe(2);
      } finally {
        agents.destroy();
      }
    });

    it('keeps at most its limit of destinations, closing the idle connections of the oldest', async () => {
      const agents = new GuardedAgents(1);
      try {
        answers = { 'one.test': ['127.0.0.1'], 'two.test': ['127.0.0.1'] };
        expect(await send(agents, 'one.test', allowed.port)).toBe(200);
        expect(await send(agents, 'two.test', allowed.port)).toBe(200);
        expect(await send(agents, 'one.test', allowed.port)).toBe(200);
        expect(allowed.connections).toBe(3);
      } finally {
        agents.destroy();
      }
    });
  });
});
