import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import type { RequestContext } from '../common/context/request-context';
import { AppError } from '../common/errors/app-error';
import type { IfMatch } from '../common/http/conditional-requests';
import type { ConfigResponseDto, UpdateConfigDto } from './dto/form-config.dto';
import type { ConfigVersionDto, ConfigVersionPageDto } from './dto/form-config-version.dto';
import { toConfigVersion, toConfigVersionSummary } from './form-config.mapper';
import { FormConfigVersionsRepository, type ConfigVersionRow } from './form-config-versions.repository';
import { FormConfigsService } from './form-configs.service';
import { formOpenApiDocument } from './form-openapi-document';

/** The largest version an integer column holds; a larger number names no version. */
const MAX_VERSION = 2_147_483_647;

/**
 * The kept versions of a configuration (form versions): listed and read by whoever may read the
 * configuration, restored by whoever may update it, with the same site rules (another site's form
 * is a 404).
 */
@Injectable()
export class FormConfigVersionsService {
  constructor(
    private readonly configs: FormConfigsService,
    private readonly versions: FormConfigVersionsRepository,
    @Inject(APP_CONFIG) private readonly appConfig: AppConfig,
  ) {}

  async list(
    ctx: RequestContext,
    configId: string,
    paging: { page?: number; limit?: number },
  ): Promise<ConfigVersionPageDto> {
    const config = await this.configs.requireVisible(ctx, configId);
    const page = paging.page ?? 1;
    const limit = paging.limit ?? 20;
    const { rows, total } = await this.versions.page(config.id, { page, limit });
    return { data: rows.map(toConfigVersionSummary), total, page, pages: Math.ceil(total / limit) };
  }

  async get(ctx: RequestContext, configId: string, version: number): Promise<ConfigVersionDto> {
    return toConfigVersion(await this.requireVersion(ctx, configId, version));
  }

  /**
   * The form's own OpenAPI document of `version` (the current one when absent): `FormData` is that
   * version's schema, so a client generated yesterday can be generated again.
   */
  async openApiDocument(
    ctx: RequestContext,
    configId: string,
    version: number | undefined,
  ): Promise<Record<string, unknown>> {
    const bounds = { maxListRows: this.appConfig.listMaxRows };
    if (version === undefined) return formOpenApiDocument(await this.configs.get(ctx, configId), bounds);
    const kept = await this.requireVersion(ctx, configId, version);
    return formOpenApiDocument(
      {
        id: kept.configId,
        title: kept.title,
        schema: kept.schema,
        updatedAt: kept.createdAt.toISOString(),
        version: kept.version,
      },
      bounds,
    );
  }

  /**
   * Makes `version`'s content current again as a new version (its site stays the current one: a
   * restore does not move a form between sites). If-Match and the merge rule are the update's.
   */
  async restore(
    ctx: RequestContext,
    configId: string,
    version: number,
    ifMatch: IfMatch,
  ): Promise<ConfigResponseDto> {
    const kept = await this.requireVersion(ctx, configId, version);
    return this.configs.update(ctx, configId, contentOf(kept), ifMatch, { restoredFrom: kept.version });
  }

  private async requireVersion(ctx: RequestContext, configId: string, version: number) {
    const config = await this.configs.requireVisible(ctx, configId);
    const kept =
      Number.isSafeInteger(version) && version >= 1 && version <= MAX_VERSION
        ? await this.versions.find(config.id, version)
        : null;
    if (!kept) throw new AppError('CONFIG_VERSION_NOT_FOUND');
    return kept;
  }
}

/** A version's content as an update body; the site is left out (see restore). */
function contentOf(kept: ConfigVersionRow): UpdateConfigDto {
  return {
    title: kept.title,
    type: kept.type as UpdateConfigDto['type'],
    tags: kept.tags,
    description: kept.description,
    schema: kept.schema,
    validationRules: kept.validationRules,
    computedRules: kept.computedRules,
    preferences: kept.preferences,
    definition: kept.definition,
  };
}
