import type { ConfigRow } from './form-configs.repository';

export function toConfigSummary(row: Pick<ConfigRow, 'id' | 'title' | 'type' | 'tags'>) {
  return { id: row.id, title: row.title, type: row.type, tags: row.tags };
}

export function toConfigResponse(row: ConfigRow) {
  return {
    id: row.id,
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
    isActive: row.isActive,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
export type ConfigResponse = ReturnType<typeof toConfigResponse>;
