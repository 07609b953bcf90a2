import { HttpService } from '@nestjs/axios';
import { Inject, Injectable, Optional, type OnModuleDestroy } from '@nestjs/common';
import type { Readable } from 'node:stream';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { OutboundHttpError } from './outbound-http.error';
import { AddressPolicy } from './address-policy';
import { OUTBOUND_DNS_RESOLVER, systemDnsResolver, type DnsResolver } from './dns-resolver';
import { checkedAddresses, GuardedAgents } from './guarded-agent';
import { OutboundErrorCode, toOutboundHttpError } from './outbound-errors';
import {
  followRedirect,
  isRedirect,
  MAX_REDIRECTS,
  type Confined,
  type Hop,
  type HttpMethod,
} from './redirects';
import { parseTarget, socketHost, targetPort } from './request-target';
import { decodeBody, readCapped } from './response-body';
import { BodyOpenError, isStreamedBody, type StreamedBody } from './streamed-body';

export const MAX_TIMEOUT_MS = 60_000;
export const DEFAULT_MAX_RESPONSE_BYTES = 5 * 1024 * 1024;

export interface OutboundRequest {
  method: HttpMethod;
  url: string;
  headers?: Record<string, string>;
  /**
   * Sent as is; the caller sets the content type. A `StreamedBody` is opened for each request that
   * sends it and sent with its Content-Length; a failure to open it is thrown as the opener threw it.
   */
  body?: string | Buffer | StreamedBody;
  /** The whole exchange (connections, redirects, body); default WORKFLOW_API_TIMEOUT_MS, at most 60 s. */
  timeoutMs?: number;
  /** Default 5 MB; a larger (decompressed) body fails the request, unless `truncateResponse`. */
  maxResponseBytes?: number;
  /** A body larger than `maxResponseBytes` is cut there (the rest is not read) instead of failing. */
  truncateResponse?: boolean;
  /** Default true; false returns a redirect (3xx with `Location`) as the answer, without following it. */
  followRedirects?: boolean;
  /** Aborting it ends the exchange (as a `TIMEOUT`). */
  signal?: AbortSignal;
  /** Headers and body that a redirect may not carry to another origin (see `followRedirect`). */
  confined?: Confined;
}

export interface OutboundResponse {
  status: number;
  /** Lower-cased names. */
  headers: Record<string, string | string[]>;
  /** Parsed JSON when the content type says JSON, else text. */
  data: unknown;
  /** The URL that answered (after redirects). */
  url: string;
}

/**
 * The outbound HTTP client of the `api` workflow step and of webhooks, guarded against SSRF
 * (WORKFLOW_API_ALLOWED_HOSTS exempts hosts, WORKFLOW_API_TIMEOUT_MS bounds it): every request (and every
 * redirect) resolves its host once through the guard, which refuses private, loopback,
 * link-local, metadata (...) addresses, and connects only to the addresses it checked. Connections
 * are kept alive per destination and checked address (see GuardedAgents). Redirects are followed
 * here (at most 5); a hop to another origin drops credentials and whatever the request confined to
 * its origin. A non-2xx answer is returned, not thrown; a failure throws `OutboundHttpError`.
 */
@Injectable()
export class OutboundHttpService implements OnModuleDestroy {
  private readonly policy: AddressPolicy;
  private readonly resolve: DnsResolver;
  private readonly agents = new GuardedAgents();

  constructor(
    private readonly http: HttpService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Optional() @Inject(OUTBOUND_DNS_RESOLVER) resolver?: DnsResolver,
  ) {
    this.policy = new AddressPolicy(config.workflowApiAllowedHosts);
    this.resolve = resolver ?? systemDnsResolver;
  }

  onModuleDestroy(): void {
    this.agents.destroy();
  }

  async request(request: OutboundRequest): Promise<OutboundResponse> {
    let hop: Hop = {
      method: request.method,
      url: parseTarget(request.url),
      headers: { ...request.headers },
      body: request.body,
      confined: request.confined,
    };
    const timeoutMs = Math.min(
      Math.max(request.timeoutMs ?? this.config.workflowApiTimeoutMs, 1),
      MAX_TIMEOUT_MS,
    );
    const maxBytes = request.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    // One signal for the exchange: the timeout, or the caller's signal passed on (cheaper than
    // AbortSignal.any, which costs a weakly referenced composite signal per request on Node 20).
    const exchange = new AbortController();
    const signal = exchange.signal;
    const timeout = setTimeout(() => exchange.abort(), timeoutMs);
    let callerAborted = false;
    const passOn = () => {
      callerAborted = !signal.aborted;
      exchange.abort();
    };
    if (request.signal?.aborted) passOn();
    else request.signal?.addEventListener('abort', passOn, { once: true });
    // The streams of a streamed body, ended with the exchange whatever its outcome (an answer
    // given before the whole body was read, a timeout) so their source is not left open.
    const opened: Readable[] = [];
    try {
      for (let redirects = 0; ; redirects++) {
        const response = await this.send(hop, signal, opened);
        const follow = request.followRedirects !== false && isRedirect(response.status);
        const location = follow ? header(response.headers, 'location') : undefined;
        if (location === undefined) {
          const body = await readCapped(abortable(response.data, signal), maxBytes, request.truncateResponse);
          return {
            status: response.status,
            headers: response.headers,
            data: decodeBody(body, header(response.headers, 'content-type')),
            url: hop.url.href,
          };
        }
        response.data.destroy();
        if (redirects === MAX_REDIRECTS) {
          throw new OutboundHttpError(`More than ${MAX_REDIRECTS} redirects`, {
            code: OutboundErrorCode.TOO_MANY_REDIRECTS,
            details: { maxRedirects: MAX_REDIRECTS },
          });
        }
        hop = followRedirect(hop, response.status, location);
      }
    } catch (error) {
      if (error instanceof BodyOpenError) throw error.cause;
      if (
        signal.aborted &&
        !(error instanceof OutboundHttpError && error.code !== OutboundErrorCode.TIMEOUT)
      ) {
        throw new OutboundHttpError(`No complete answer from ${hop.url.host} within ${timeoutMs} ms`, {
          code: OutboundErrorCode.TIMEOUT,
          retryable: true,
          details: { host: hop.url.host, timeoutMs, aborted: callerAborted },
        });
      }
      throw toOutboundHttpError(error, hop.url.host);
    } finally {
      clearTimeout(timeout);
      request.signal?.removeEventListener('abort', passOn);
      for (const stream of opened) stream.destroy();
    }
  }

  /** One request through the guarded agent of what it checked; resolves with the status, headers and unread body. */
  private async send(
    hop: Hop,
    signal: AbortSignal,
    opened: Readable[],
  ): Promise<{ status: number; headers: Record<string, string | string[]>; data: Readable }> {
    const host = socketHost(hop.url);
    const port = targetPort(hop.url);
    const guard = { policy: this.policy, exempt: this.policy.isExempt(hop.url.hostname, port) };
    const addresses = await untilAborted(checkedAddresses({ ...guard, resolve: this.resolve }, host), signal);
    const protocol = hop.url.protocol as 'http:' | 'https:';
    const agent = this.agents.for(protocol, { host, port }, guard, addresses);
    const { headers, data } = await requestBody(hop, opened);
    const response = await this.http.axiosRef.request<Readable>({
      url: hop.url.href,
      method: hop.method,
      headers,
      data,
      httpAgent: protocol === 'http:' ? agent : undefined,
      httpsAgent: protocol === 'https:' ? agent : undefined,
      proxy: false,
      maxRedirects: 0,
      responseType: 'stream',
      decompress: true,
      validateStatus: () => true,
      transformRequest: [(data: unknown) => data],
      timeout: 0,
      signal,
    });
    return { status: response.status, headers: plainHeaders(response.headers), data: response.data };
  }
}

/** The headers and data of one request: a streamed body is opened now, with its own Content-Length. */
async function requestBody(
  hop: Hop,
  opened: Readable[],
): Promise<{ headers: Record<string, string>; data: string | Buffer | Readable | undefined }> {
  if (!isStreamedBody(hop.body)) return { headers: hop.headers, data: hop.body };
  const body: StreamedBody = hop.body;
  const stream = await body.open().catch((error: unknown) => {
    throw new BodyOpenError(error);
  });
  opened.push(stream);
  const headers = Object.fromEntries(
    Object.entries(hop.headers).filter(([name]) => name.toLowerCase() !== 'content-length'),
  );
  return { headers: { ...headers, 'content-length': String(body.length) }, data: stream };
}

function plainHeaders(headers: unknown): Record<string, string | string[]> {
  const source = (headers as { toJSON?: () => object }).toJSON?.() ?? (headers as object);
  const result: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(source)) {
    if (typeof value === 'string' || Array.isArray(value)) result[name.toLowerCase()] = value;
    else if (value !== undefined && value !== null) result[name.toLowerCase()] = String(value);
  }
  return result;
}

function header(headers: Record<string, string | string[]>, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** A name resolution ends (as aborted) when the exchange's time is up. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new Error('aborted'));
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(new Error('aborted'));
    signal.addEventListener('abort', abort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}

/** Ends a body read when the exchange's time is up. */
function abortable(stream: Readable, signal: AbortSignal): Readable {
  if (signal.aborted) stream.destroy(new Error('aborted'));
  else signal.addEventListener('abort', () => stream.destroy(new Error('aborted')), { once: true });
  return stream;
}
