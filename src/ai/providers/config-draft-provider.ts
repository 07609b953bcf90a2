import type { FieldError } from '../../common/errors/app-error';
import type { Locale } from '../../common/i18n/locale';
import type { ConfigType } from '../../form-configs/dto/form-config.dto';

/** What a provider is asked to turn into a configuration draft. */
export interface ConfigDraftRequest {
  /** The administrator's description of the form, if any. */
  prompt?: string;
  /** Example records (CSV samples arrive already parsed), if any; at most 1,000. */
  samples?: Record<string, unknown>[];
  /** The configuration type asked for; the service sets it on the draft whatever the provider answers. */
  type?: ConfigType;
  /** A title asked for; the service sets it on the draft. */
  title?: string;
  /** Language of titles, messages and warnings. */
  locale: Locale;
  /**
   * The problems `POST /api/configs` would report for this draft (after the service's defaults are
   * filled in); an empty list means it would be accepted. Providers that can correct themselves
   * (a language model) use it for a repair round.
   */
  check(draft: unknown): FieldError[];
}

/** A remark for the reviewer; the service localizes `ai.<code>` from i18n unless `message` is given. */
export interface DraftWarning {
  code: string;
  field?: string;
  params?: Record<string, unknown>;
  message?: string;
}

export interface ConfigDraftResult {
  /**
   * A configuration body as `POST /api/configs` takes it (`title`, `type`, `tags`, `description`,
   * `schema`, `validationRules`, `computedRules`, `preferences`). Missing `type`, `tags`, rules and
   * preferences get defaults; the service validates the result and refuses an invalid one (502).
   */
  draft: unknown;
  warnings: DraftWarning[];
}

/**
 * The contract of a configuration-draft provider: a Nest provider marked `@ConfigDraftProvider({name})`
 * in any module. The one named by `AI_PROVIDER` answers `POST /api/ai/configs/generate`.
 * Throw `AppError`s (`AI_SAMPLES_REQUIRED`, `AI_UNAVAILABLE`, `AI_TIMEOUT`, `AI_INVALID_ANSWER`) for
 * failures the caller should see; anything else is a 500.
 */
export interface ConfigDraftGenerator {
  generate(request: ConfigDraftRequest): Promise<ConfigDraftResult>;
}
