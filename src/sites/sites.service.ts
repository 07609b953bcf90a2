import { Injectable } from '@nestjs/common';
import type { RequestContext } from '../common/context/request-context';
import { callerSiteOf, isVisibleInScope, ownSiteScopeOf } from '../common/context/site-scope';
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

  /**
   * The site a new configuration or workflow definition is stored in, from the `siteId` the body
   * names (undefined: not named). Admins choose any active site (else 422) or none (shared by every
   * site). Anyone else writes only in their own site (`callerSiteOf`): not naming one means that
   * site; naming another site or null (shared) is 403 SITE_FORBIDDEN, and so is any write by a
   * caller without a site (a global user on a host of no site), since only admins share.
   */
  async siteOfNewDefinition(ctx: RequestContext, siteId: string | null | undefined): Promise<string | null> {
    if (ctx.user?.role === 'admin') {
      await this.requireUsable(siteId);
      return siteId ?? null;
    }
    return this.requireOwnSite(ctx, siteId);
  }

  /**
   * The same rule for a change (an update or a delete) of a stored definition the caller can see,
   * at `currentSiteId`, to `siteId` (undefined: kept). A non-admin changes only their own site's
   * definitions, never a shared one (403 SITE_FORBIDDEN), and cannot move one (another site's is a
   * 404 before this, as on a read).
   */
  async requireDefinitionChange(
    ctx: RequestContext,
    currentSiteId: string | null,
    siteId: string | null | undefined,
  ): Promise<void> {
    if (ctx.user?.role === 'admin') {
      if (siteId !== undefined) await this.requireUsable(siteId);
      return;
    }
    const own = this.requireOwnSite(ctx, siteId);
    if (currentSiteId !== own) throw new AppError('SITE_FORBIDDEN');
  }

  /** A non-admin's own site, when `siteId` names nothing else; else 403. */
  private requireOwnSite(ctx: RequestContext, siteId: string | null | undefined): string {
    const own = callerSiteOf(ctx);
    if (own === null || (siteId !== undefined && siteId !== own)) throw new AppError('SITE_FORBIDDEN');
    return own;
  }

  private async requireUsable(siteId: string | null | undefined): Promise<void> {
    const problem = await this.siteIdProblem(siteId);
    if (problem) throw new AppError('VALIDATION_FAILED', { validationErrors: [problem] });
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
