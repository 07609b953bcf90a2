import { Test, type TestingModule } from '@nestjs/testing';
import { loadConfig } from '../../src/config/app-config';
import { AppConfigModule } from '../../src/config/config.module';
import { OutboundHttpError } from '../../src/common/outbound-http/outbound-http.error';
import { OutboundHttpModule } from '../../src/common/outbound-http/outbound-http.module';
import {
  OUTBOUND_DNS_RESOLVER,
  systemDnsResolver,
  type DnsResolver,
} from '../../src/common/outbound-http/dns-resolver';
import {
  OutboundHttpService,
  type OutboundRequest,
} from '../../src/common/outbound-http/outbound-http.service';
import { startHttpServer, type HttpTestServer } from './http-test-server';

/** Names the fake resolver knows; anything else goes to the system resolver (`localhost`). */
const FAKE_DNS: Record<string, string[]> = {
  'internal.test': ['127.0.0.1'],
  'pinned.test': ['127.0.0.1'],
};

export interface OutboundHttpFixture {
  /** 127.0.0.1, allow-listed with its port (and as `pinned.test`). */
  server: HttpTestServer;
  /** 127.0.0.1, another allow-listed origin. */
  other: HttpTestServer;
  /** 127.0.0.2, never allow-listed. */
  refused: HttpTestServer;
  outbound: OutboundHttpService;
  /** Every name the service looked up since the test began. */
  lookups: string[];
  /** A GET with a generous timeout, unless `request` says otherwise. */
  send(request: Partial<OutboundRequest> & { url: string }): ReturnType<OutboundHttpService['request']>;
}

/**
 * The outbound HTTP service alone (no app), with three real servers and a resolver that knows two
 * test names; handed to `use` once, reset before each test.
 */
export function useOutboundHttp(use: (fixture: OutboundHttpFixture) => void): void {
  let moduleRef: TestingModule;
  let fixture: OutboundHttpFixture;
  beforeAll(async () => {
    const lookups: string[] = [];
    const resolver: DnsResolver = async (hostname) => {
      lookups.push(hostname);
      const fake = FAKE_DNS[hostname];
      return fake ? fake.map((address) => ({ address, family: 4 })) : systemDnsResolver(hostname);
    };
    const server = await startHttpServer('127.0.0.1');
    const other = await startHttpServer('127.0.0.1');
    const refused = await startHttpServer('127.0.0.2');
    const config = loadConfig({
      NODE_ENV: 'test',
      WORKFLOW_API_TIMEOUT_MS: '2000',
      WORKFLOW_API_ALLOWED_HOSTS: `127.0.0.1:${server.port},127.0.0.1:${other.port},pinned.test:${server.port}`,
    });
    moduleRef = await Test.createTestingModule({
      imports: [AppConfigModule.forRoot(config), OutboundHttpModule],
    })
      .overrideProvider(OUTBOUND_DNS_RESOLVER)
      .useValue(resolver)
      .compile();
    const outbound = moduleRef.get(OutboundHttpService);
    fixture = {
      server,
      other,
      refused,
      outbound,
      lookups,
      // Generous: a loaded CI machine must not turn a slow loopback answer into a TIMEOUT; the
      // timeout tests set their own short limits.
      send: (request) => outbound.request({ method: 'GET', timeoutMs: 10_000, ...request }),
    };
    use(fixture);
  });
  afterAll(async () => {
    await moduleRef.close();
    await Promise.all([fixture.server.close(), fixture.other.close(), fixture.refused.close()]);
  });
  beforeEach(() => {
    fixture.server.reset();
    fixture.other.reset();
    fixture.refused.reset();
    fixture.lookups.length = 0;
  });
}

/** The OutboundHttpError `promise` rejects with (the test fails if it resolves). */
export async function failure(promise: Promise<unknown>): Promise<OutboundHttpError> {
  const error = await promise.then(
    () => {
      throw new Error('expected the request to fail');
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OutboundHttpError);
  return error as OutboundHttpError;
}

/** None of `servers` saw a request or even a connection. */
export function nothingReached(...servers: HttpTestServer[]): void {
  for (const s of servers) {
    expect(s.requests).toHaveLength(0);
    expect(s.connections).toBe(0);
  }
}
