import { Injectable } from '@nestjs/common';
import type { RequestContext } from '../common/context/request-context';
import { isVisibleInScope, siteScopeOf } from '../common/context/site-scope';
import { isUuid } from '../common/validation/is-uuid';
import { AppError } from '../common/errors/app-error';
import {
  expectedVersions,
  ifMatchAllows,
  NO_PRECONDITION,
  preconditionFailed,
  type IfMatch,
} from '../common/http/conditional-requests';
import type { FormPreferences } from '../database/schema';
import { SitesService } from '../sites/sites.service';
import { FormValidator } from '../validation/form-validator.service';
import { FormConfigCache } from './form-config-cache';
import { toConfigResponse, toConfigSummary } from './form-config.mapper';
import { FormConfigsRepository, type ConfigChanges, type ConfigRow } from './form-configs.repository';
import type { VersionOrigin } from './form-config-versions.repository';
import type {
  ConfigListDto,
  ConfigResponseDto,
  CreateConfigDto,
  ListConfigsQueryDto,
  PreferencesDto,
  UpdateConfigDto,
} from './dto/form-config.dto';

const DEFAULT_PREFERENCES: FormPreferences = {
  saveLimit: null,
  allowEdit: true,
  allowDelete: true,
  storeComputedResults: false,
};

@Injectable()
export class FormConfigsService {
  constructor(
    private readonly configs: FormConfigsRepository,
    private readonly cache: FormConfigCache,
    private readonly validator: FormValidator,
    private readonly sites: SitesService,
  ) {}

  async list(ctx: RequestContext, query: ListConfigsQueryDto): Promise<ConfigListDto> {
    const tags = query.tags
      ?.split(',')
      .map((tag) => tag.trim())
      .filter(Boolean);
    const { rows, total } = await this.configs.listActiveInScope(siteScopeOf(ctx), {
      type: query.type,
      tags,
    });
    return { data: rows.map(toConfigSummary), totalCount: total };
  }

  async get(ctx: RequestContext, configId: string): Promise<ConfigResponseDto> {
    const load = async () => toConfigResponse(await this.requireVisible(ctx, configId));
    if (!ctx.user) return load();
    // A cached entry was visible to this user when stored; the site check still runs on every read.
    const config = await this.cache.getOrLoad(configId, ctx.user.userId, load);
    if (!isVisibleInScope(config.siteId, siteScopeOf(ctx))) {
      throw new AppError('CONFIG_NOT_FOUND');
    }
    return config;
  }

  /** The active configuration visible to the caller, or a 404: the one lookup every data route starts with. */
  async requireVisible(ctx: RequestContext, configId: string): Promise<ConfigRow> {
    const config = isUuid(configId)
      ? await this.cache.row(configId, () => this.configs.findActiveInScope(configId, { kind: 'all' }))
      : null;
    if (!config || !isVisibleInScope(config.siteId, siteScopeOf(ctx))) throw new AppError('CONFIG_NOT_FOUND');
    return config;
  }

  async create(ctx: RequestContext, body: CreateConfigDto): Promise<ConfigResponseDto> {
    const siteId = await this.sites.siteOfNewDefinition(ctx, body.siteId);
    this.validator.assertDefinitionIsValid(body);
    const row = await this.configs.insert({
      title: body.title,
      type: body.type,
      tags: body.tags ?? [],
      siteId,
      description: body.description ?? null,
      schema: body.schema ?? null,
      validationRules: body.validationRules ?? [],
      computedRules: body.computedRules ?? [],
      preferences: mergePreferences(DEFAULT_PREFERENCES, body.preferences),
      definition: body.definition ?? null,
      createdBy: ctx.user?.userId ?? null,
    });
    return toConfigResponse(row);
  }

  /**
   * Applies the given fields over the stored ones. The write requires the version the merge was made
   * from: with If-Match a configuration changed since is a 412; without, a concurrent change makes
   * it merge again over the newer version, so neither change is lost. The new version is kept
   * (form versions), as a restore of `restoredFrom` when that is given.
   */
  async update(
    ctx: RequestContext,
    configId: string,
    body: UpdateConfigDto,
    ifMatch: IfMatch = NO_PRECONDITION,
    restore: { restoredFrom: number } | null = null,
  ): Promise<ConfigResponseDto> {
    const origin: VersionOrigin = restore
      ? { action: 'restored', authorId: ctx.user?.userId ?? null, restoredFrom: restore.restoredFrom }
      : { action: 'updated', authorId: ctx.user?.userId ?? null };
    for (let attempt = 1; ; attempt++) {
      // Read from the database, not the cache: the write is conditional on exactly this version.
      const current = await this.requireCurrent(ctx, configId);
      if (!ifMatchAllows(ifMatch, current.version)) throw preconditionFailed(current.version);
      await this.sites.requireDefinitionChange(ctx, current.siteId, body.siteId);
      const row = await this.configs.updateActive(current, this.changesOf(current, body), origin);
      if (row) {
        await this.cache.invalidate(configId);
        return toConfigResponse(row);
      }
      if (attempt >= MAX_MERGE_ATTEMPTS) throw new AppError('CONFLICT');
    }
  }

  /** The stored configuration with `body`'s fields over it (validated). */
  private changesOf(current: ConfigRow, body: UpdateConfigDto): ConfigChanges {
    const next = {
      schema: body.schema !== undefined ? body.schema : current.schema,
      validationRules: body.validationRules ?? current.validationRules,
      computedRules: body.computedRules ?? current.computedRules,
    };
    this.validator.assertDefinitionIsValid(next);
    return {
      ...(body.title !== undefined && { title: body.title }),
      ...(body.type !== undefined && { type: body.type }),
      ...(body.tags !== undefined && { tags: body.tags }),
      ...(body.siteId !== undefined && { siteId: body.siteId }),
      ...(body.description !== undefined && { description: body.description }),
      ...(body.definition !== undefined && { definition: body.definition }),
      ...next,
      preferences: mergePreferences(current.preferences, body.preferences),
    };
  }

  /** Deactivates; the records are kept (and become unreachable with it). */
  async remove(
    ctx: RequestContext,
    configId: string,
    ifMatch: IfMatch = NO_PRECONDITION,
  ): Promise<ConfigResponseDto> {
    const current = await this.requireCurrent(ctx, configId);
    if (!ifMatchAllows(ifMatch, current.version)) throw preconditionFailed(current.version);
    await this.sites.requireDefinitionChange(ctx, current.siteId, undefined);
    const row = await this.configs.deactivate(configId, expectedVersions(ifMatch));
    if (!row) {
      // Changed meanwhile (412 when the If-Match version is gone) or deleted (404).
      const now = await this.configs.findActiveInScope(configId, { kind: 'all' });
      throw now ? preconditionFailed(now.version) : new AppError('CONFIG_NOT_FOUND');
    }
    await this.cache.invalidate(configId);
    return toConfigResponse(row);
  }

  /** As requireVisible, read from the database (a write is conditional on the version read). */
  private async requireCurrent(ctx: RequestContext, configId: string): Promise<ConfigRow> {
    const config = await this.configs.findActiveInScope(configId, { kind: 'all' });
    if (!config || !isVisibleInScope(config.siteId, siteScopeOf(ctx))) throw new AppError('CONFIG_NOT_FOUND');
    return config;
  }
}

/** How often an update without If-Match merges again after losing a race, before a 409. */
const MAX_MERGE_ATTEMPTS = 5;

function mergePreferences(base: FormPreferences, changes: PreferencesDto | undefined): FormPreferences {
  return {
    saveLimit: changes?.saveLimit !== undefined ? changes.saveLimit : base.saveLimit,
    allowEdit: changes?.allowEdit ?? base.allowEdit,
    allowDelete: changes?.allowDelete ?? base.allowDelete,
    storeComputedResults: changes?.storeComputedResults ?? base.storeComputedResults,
  };
}
