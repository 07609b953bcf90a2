import { Injectable } from '@nestjs/common';
import type { RequestContext } from '../common/context/request-context';
import { isVisibleInScope, ownSiteScopeOf } from '../common/context/site-scope';
import { AppError, type FieldError } from '../common/errors/app-error';
import { isUuid } from '../common/validation/is-uuid';
import type { CreateSiteDto, SiteListDto, SiteResponseDto, UpdateSiteDto } from './dto/site.dto';
import { toSiteResponse } from './site.mapper';
import { normalizeHost, SiteResolver } from './site-resolver.service';
import { SitesRepository, type SiteRow } from './sites.repository';

const HOST_NAME =
  /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

/** Lower-cased host names without port, each valid and listed once. */
function normalizeDomains(domains: string[]): string[] {
  const normalized = [...new Set(domains.map((domain) => normalizeHost(domain)))];
  const invalid = normalized.filter((domain) => !HOST_NAME.test(domain) && domain !== '::1');
  if (invalid.length > 0) {
    throw new AppError('VALIDATION_FAILED', {
      validationErrors: invalid.map((domain) => ({
        field: 'domains',
        rule: 'hostName',
        message: `"${domain}" is not a host name`,
      })),
    });
  }
  return normalized;
}

@Injectable()
export class SitesService {
  constructor(
    private readonly sites: SitesRepository,
    private readonly resolver: SiteResolver,
  ) {}

  /**
   * The problem with a `siteId` a user or configuration is given: none when it is null or names an
   * active site. Other modules collect it with their own field errors.
   */
  async siteIdProblem(siteId: string | null | undefined): Promise<FieldError | null> {
    if (!siteId || (await this.sites.isActive(siteId))) return null;
    return { field: 'siteId', rule: 'exists', message: 'siteId does not name an active site' };
  }

  /** Admins list every active site; anyone else only their own, or none when they have no site. */
  async list(ctx: RequestContext): Promise<SiteListDto> {
    const scope = ownSiteScopeOf(ctx);
    let rows: SiteRow[];
    if (scope.kind === 'all') rows = await this.sites.listActive();
    else {
      const own = scope.siteId ? await this.sites.findActive(scope.siteId) : null;
      rows = own ? [own] : [];
    }
    return { data: rows.map(toSiteResponse), totalCount: rows.length };
  }

  /** Another site than the caller's own is a 404 to a non-admin, as an unknown one. */
  async get(ctx: RequestContext, siteId: string): Promise<SiteResponseDto> {
    const site = await this.require(siteId);
    if (!isVisibleInScope(site.id, ownSiteScopeOf(ctx))) throw new AppError('SITE_NOT_FOUND');
    return toSiteResponse(site);
  }

  async create(_ctx: RequestContext, body: CreateSiteDto): Promise<SiteResponseDto> {
    const domains = normalizeDomains(body.domains);
    const { site, conflict } = await this.sites.saveClaimingDomains({
      name: body.name,
      domains,
      isActive: body.isActive,
    });
    if (conflict) throw new AppError('SITE_DOMAIN_TAKEN', { params: { domain: conflict } });
    await this.resolver.invalidateHosts(domains);
    return toSiteResponse(site!);
  }

  async update(_ctx: RequestContext, siteId: string, body: UpdateSiteDto): Promise<SiteResponseDto> {
    const current = await this.require(siteId);
    const domains = body.domains !== undefined ? normalizeDomains(body.domains) : undefined;
    const { site, conflict } = await this.sites.saveClaimingDomains({
      id: siteId,
      name: body.name,
      domains,
      isActive: body.isActive,
    });
    if (conflict) throw new AppError('SITE_DOMAIN_TAKEN', { params: { domain: conflict } });
    if (!site) throw new AppError('SITE_NOT_FOUND');
    // Hosts that left or joined the site must be resolved afresh.
    await this.resolver.invalidateHosts([...current.domains, ...site.domains]);
    return toSiteResponse(site);
  }

  private async require(siteId: string): Promise<SiteRow> {
    const site = isUuid(siteId) ? await this.sites.findActive(siteId) : null;
    if (!site) throw new AppError('SITE_NOT_FOUND');
    return site;
  }
}
