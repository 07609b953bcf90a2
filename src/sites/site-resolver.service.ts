import { Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { AppCache, CACHE_TTL } from '../common/cache/app-cache.service';
import { SitesRepository } from './sites.repository';

/** `Example.COM:3000` → `example.com`; `[::1]:3000` → `::1`. */
export function normalizeHost(host: string | undefined): string {
  if (!host) return '';
  const trimmed = host.trim().toLowerCase();
  if (trimmed.startsWith('['))
    return trimmed.slice(1, trimmed.indexOf(']') > 0 ? trimmed.indexOf(']') : undefined);
  return trimmed.replace(/:\d+$/, '').replace(/\.$/, '');
}

/** Chooses the site of a request from its Host header (cached); null when no active site claims the host. */
@Injectable()
export class SiteResolver {
  constructor(
    private readonly sites: SitesRepository,
    private readonly cache: AppCache,
  ) {}

  static key(host: string): string {
    return `site-host:${host}`;
  }

  siteIdForHost(host: string): Promise<string | null> {
    if (!host) return Promise.resolve(null);
    return this.cache.getOrLoad(SiteResolver.key(host), CACHE_TTL.site, () =>
      this.sites.findActiveIdByDomain(host),
    );
  }

  /** Resolves once per request and remembers the answer on it; guards and the interceptor share it. */
  async resolve(request: FastifyRequest): Promise<string | null> {
    if (request.siteId !== undefined) return request.siteId;
    request.siteId = await this.siteIdForHost(normalizeHost(request.headers.host));
    return request.siteId;
  }

  invalidateHosts(hosts: string[]): Promise<void> {
    return this.cache.delete(...hosts.map((host) => SiteResolver.key(host)));
  }
}
