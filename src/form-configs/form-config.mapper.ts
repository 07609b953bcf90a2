import type { ConfigResponseDto, ConfigSummaryDto } from './dto/form-config.dto';
import type { ConfigRow } from './form-configs.repository';
import type { ConfigVersionDto, ConfigVersionSummaryDto } from './dto/form-config-version.dto';
import type {
  ConfigVersionAction,
  ConfigVersionRow,
  ConfigVersionSummaryRow,
  VersionedPart,
} from './form-config-versions.repository';

export function toConfigSummary(row: Pick<ConfigRow, 'id' | 'title' | 'type' | 'tags'>): ConfigSummaryDto {
  return { id: row.id, title: row.title, type: row.type, tags: row.tags };
}

/** A configuration as the API returns it; typed as its DTO so the OpenAPI document cannot drift. */
export function toConfigResponse(row: ConfigRow): ConfigResponseDto {
  return {
    id: row.id,
    ...versionedPartsOf(row),
    isActive: row.isActive,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    version: row.version,
  };
}

export function toConfigVersionSummary(row: ConfigVersionSummaryRow): ConfigVersionSummaryDto {
  return {
    version: row.version,
    action: row.action as ConfigVersionAction,
    restoredFrom: row.restoredFrom ?? null,
    changedParts: row.changedParts,
    authorId: row.authorId ?? null,
    createdAt: row.createdAt.toISOString(),
  };
}

export function toConfigVersion(row: ConfigVersionRow): ConfigVersionDto {
  return {
    ...toConfigVersionSummary(row),
    configId: row.configId,
    ...versionedPartsOf(row),
  };
}

/**
 * The content a version keeps (VERSIONED_PARTS), as the API returns it: the same in a configuration
 * and in each of its versions. Spread where these fields stand, so the JSON keeps its key order.
 */
function versionedPartsOf(row: Pick<ConfigRow, VersionedPart>): Pick<ConfigVersionDto, VersionedPart> {
  return {
    title: row.title,
    type: row.type,
    tags: row.tags,
    siteId: row.siteId ?? null,
    description: row.description ?? null,
    schema: row.schema ?? null,
    validationRules: row.validationRules,
    computedRules: row.computedRules,
    preferences: row.preferences,
    definition: row.definition ?? null,
  };
}
