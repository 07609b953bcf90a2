import { HttpService } from '@nestjs/axios';
import { Inject, Injectable, Optional } from '@nestjs/common';
import type { Agent } from 'node:http';
import { isIP } from 'node:net';
import type { Readable } from 'node:stream';
import { APP_CONFIG, type AppConfig } from '../../../config/app-config';
import { StepError } from '../step-error';
import { AddressPolicy } from './address-policy';
import { OUTBOUND_DNS_RESOLVER, systemDnsResolver, type DnsResolver } from './dns-resolver';
import { createGuardedAgent } from './guarded-agent';
import { DestinationRefusedError, OutboundErrorCode, toStepError } from './outbound-errors';
import { followRedirect, isRedirect, MAX_REDIRECTS, type Hop, type HttpMethod } from './redirects';
import { parseTarget, socketHost, targetPort } from './request-target';
import { decodeBody, readCapped } from './response-body';

export const MAX_TIMEOUT_MS = 60_000;
export const DEFAULT_MAX_RESPONSE_BYTES = 5 * 1024 * 1024;

export interface OutboundRequest {
  method: HttpMethod;
  url: string;
  headers?: Record<string, string>;
  /** Sent as is; the caller sets the content type. */
  body?: string | Buffer;
  /** The whole exchange (connections, redirects, body); default WORKFLOW_API_TIMEOUT_MS, at most 60 s. */
  timeoutMs?: number;
  /** Default 5 MB; a larger (decompressed) body fails the request. */
  maxResponseBytes?: number;
  /** Aborting it ends the exchange (as a `TIMEOUT`). */
  signal?: AbortSignal;
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
 * The outbound HTTP client of workflow steps, guarded against SSRF at connect time: every
 * connection resolves its host once through the guard, which refuses private, loopback,
 * link-local, metadata (...) addresses and pins the checked address. Redirects are followed here
 * (at most 5), each target through the same guard. A non-2xx answer is returned, not thrown.
 */
@Injectable()
export class OutboundHttpService {
  private readonly policy: AddressPolicy;
  private readonly resolve: DnsResolver;

  constructor(
    private readonly http: HttpService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Optional() @Inject(OUTBOUND_DNS_RESOLVER) resolver?: DnsResolver,
  ) {
    this.policy = new AddressPolicy(config.workflowApiAllowedHosts);
    this.resolve = resolver ?? systemDnsResolver;
  }

  async request(request: OutboundRequest): Promise<OutboundResponse> {
    let hop: Hop = {
      method: request.method,
      url: parseTarget(request.url),
      headers: { ...request.headers },
      body: request.body,
    };
    const timeoutMs = Math.min(
      Math.max(request.timeoutMs ?? this.config.workflowApiTimeoutMs, 1),
      MAX_TIMEOUT_MS,
    );
    const maxBytes = request.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    const timer = new AbortController();
    const timeout = setTimeout(() => timer.abort(), timeoutMs);
    const signal = request.signal ? AbortSignal.any([timer.signal, request.signal]) : timer.signal;
    const agents: Agent[] = [];
    try {
      for (let redirects = 0; ; redirects++) {
        const response = await this.send(hop, signal, agents);
        const location = isRedirect(response.status) ? header(response.headers, 'location') : undefined;
        if (location === undefined) {
          const body = await readCapped(abortable(response.data, signal), maxBytes);
          return {
            status: response.status,
            headers: response.headers,
            data: decodeBody(body, header(response.headers, 'content-type')),
            url: hop.url.href,
          };
        }
        response.data.destroy();
        if (redirects === MAX_REDIRECTS) {
          throw new StepError(`More than ${MAX_REDIRECTS} redirects`, {
            code: OutboundErrorCode.TOO_MANY_REDIRECTS,
            details: { maxRedirects: MAX_REDIRECTS },
          });
        }
        hop = followRedirect(hop, response.status, location);
      }
    } catch (error) {
      if (signal.aborted && !(error instanceof StepError && error.code !== OutboundErrorCode.TIMEOUT)) {
        throw new StepError(`No complete answer from ${hop.url.host} within ${timeoutMs} ms`, {
          code: OutboundErrorCode.TIMEOUT,
          retryable: true,
          details: { host: hop.url.host, timeoutMs, aborted: !timer.signal.aborted },
        });
      }
      throw toStepError(error, hop.url.host);
    } finally {
      clearTimeout(timeout);
      for (const agent of agents) agent.destroy();
    }
  }

  /** One request through a fresh guarded agent; resolves with the status, headers and unread body. */
  private async send(
    hop: Hop,
    signal: AbortSignal,
    agents: Agent[],
  ): Promise<{ status: number; headers: Record<string, string | string[]>; data: Readable }> {
    const host = socketHost(hop.url);
    const exempt = this.policy.isExempt(hop.url.hostname, targetPort(hop.url));
    if (!exempt && isIP(host) !== 0) {
      const reason = this.policy.refusalFor(host);
      if (reason !== null) throw new DestinationRefusedError(host, host, reason);
    }
    const protocol = hop.url.protocol as 'http:' | 'https:';
    const agent = createGuardedAgent(protocol, { policy: this.policy, exempt, resolve: this.resolve });
    agents.push(agent);
    const response = await this.http.axiosRef.request<Readable>({
      url: hop.url.href,
      method: hop.method,
      headers: hop.headers,
      data: hop.body,
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

/** Ends a body read when the exchange's time is up. */
function abortable(stream: Readable, signal: AbortSignal): Readable {
  if (signal.aborted) stream.destroy(new Error('aborted'));
  else signal.addEventListener('abort', () => stream.destroy(new Error('aborted')), { once: true });
  return stream;
}
