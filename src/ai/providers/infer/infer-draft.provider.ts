import { Module } from '@nestjs/common';
import { AppError } from '../../../common/errors/app-error';
import type { ConfigDraftGenerator, ConfigDraftRequest, ConfigDraftResult } from '../config-draft-provider';
import { ConfigDraftProvider } from '../config-draft-provider.decorator';
import { inferSchema } from './schema-inference';

export const INFER_PROVIDER = 'infer';

/**
 * The built-in, deterministic provider: a JSON Schema inferred from the samples, nothing else
 * (no rules, default preferences). Needs samples; the prompt only gives the title.
 */
@ConfigDraftProvider({ name: INFER_PROVIDER })
export class InferDraftProvider implements ConfigDraftGenerator {
  async generate(request: ConfigDraftRequest): Promise<ConfigDraftResult> {
    if (!request.samples || request.samples.length === 0)
      throw new AppError('AI_SAMPLES_REQUIRED', { params: { provider: INFER_PROVIDER } });
    const { schema, warnings } = inferSchema(request.samples);
    if (request.prompt && !request.title)
      warnings.push({ code: 'PROMPT_IGNORED', params: { provider: INFER_PROVIDER } });
    const title = request.prompt?.split(/\r?\n/)[0].trim().slice(0, 200);
    return {
      draft: { ...(title ? { title } : {}), schema, validationRules: [], computedRules: [] },
      warnings,
    };
  }
}

@Module({ providers: [InferDraftProvider] })
export class InferDraftProviderModule {}
