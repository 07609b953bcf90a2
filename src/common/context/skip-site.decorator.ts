import { SetMetadata } from '@nestjs/common';

export const SKIP_SITE_RESOLUTION = 'site:skip-resolution';

/**
 * The route does not need the request's site, so the TenantGuard does not look it up (no
 * database or cache call). Used by the liveness probe, which must answer while the database is down.
 */
export const SkipSiteResolution = () => SetMetadata(SKIP_SITE_RESOLUTION, true);
