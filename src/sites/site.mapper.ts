import type { SiteResponseDto } from './dto/site.dto';
import type { SiteRow } from './sites.repository';

export function toSiteResponse(row: SiteRow): SiteResponseDto {
  return {
    id: row.id,
    name: row.name,
    domains: row.domains,
    isActive: row.isActive,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
