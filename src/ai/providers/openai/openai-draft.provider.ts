import { HttpModule, HttpService } from '@nestjs/axios';
import { Inject, Module } from '@nestjs/common';
import { isAxiosError } from 'axios';
import { firstValueFrom } from 'rxjs';
import { AppError, type FieldError } from '../../../common/errors/app-error';
import { APP_CONFIG, type AppConfig } from '../../../config/app-config';
import type {
  ConfigDraftGenerator,
  ConfigDraftRequest,
  ConfigDraftResult,
  DraftWarning,
} from '../config-draft-provider';
import { ConfigDraftProvider } from '../config-draft-provider.decorator';
import { DRAFT_ANSWER_SCHEMA, repairMessage, systemMessage, userMessage } from './draft-prompt';

export const OPENAI_PROVIDER = 'openai';
/** The largest answer read from the model's endpoint. */
const MAX_ANSWER_BYTES = 2 * 1024 * 1024;

interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/**
 * Any OpenAI-compatible chat-completions endpoint (`AI_BASE_URL`/chat/completions, `AI_MODEL`,
 * `AI_API_KEY`), asked for an answer constrained by the JSON Schema of a configuration draft. The
 * answer is checked as `POST /api/configs` would check it; one repair round is asked with the
 * problems, then the draft is refused (502 `AI_INVALID_ANSWER`). The endpoint is the administrator's
 * configuration, never user input. The key goes only into the Authorization header of the call:
 * errors carry a code and a status, never the request (its headers) or the library's error.
 */
@ConfigDraftProvider({ name: OPENAI_PROVIDER })
export class OpenAiDraftProvider implements ConfigDraftGenerator {
  constructor(
    private readonly http: HttpService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async generate(request: ConfigDraftRequest): Promise<ConfigDraftResult> {
    const warnings: DraftWarning[] = [];
    const { text, sent } = userMessage(request);
    if (request.samples && sent < request.samples.length)
      warnings.push({ code: 'SAMPLES_TRUNCATED', params: { count: sent } });
    const messages: ChatMessage[] = [
      { role: 'system', content: systemMessage(request.locale) },
      { role: 'user', content: text },
    ];
    let answer = await this.complete(messages);
    let outcome = this.read(answer, request);
    if (outcome.problems.length > 0) {
      messages.push(
        { role: 'assistant', content: answer },
        { role: 'user', content: repairMessage(outcome.problems) },
      );
      answer = await this.complete(messages);
      outcome = this.read(answer, request);
      if (outcome.problems.length > 0)
        throw new AppError('AI_INVALID_ANSWER', {
          validationErrors: outcome.problems,
          details: { rounds: 2 },
        });
    }
    return { draft: outcome.draft, warnings };
  }

  private read(answer: string, request: ConfigDraftRequest): { draft: unknown; problems: FieldError[] } {
    let draft: unknown;
    try {
      draft = JSON.parse(answer);
    } catch {
      return {
        draft: undefined,
        problems: [{ field: '$root', rule: 'json', message: 'the answer is not JSON' }],
      };
    }
    return { draft, problems: request.check(draft) };
  }

  /** One chat completion; the assistant message's text. */
  private async complete(messages: ChatMessage[]): Promise<string> {
    const timeoutMs = this.config.aiTimeoutMs;
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json',
    };
    if (this.config.aiApiKey) headers.authorization = `Bearer ${this.config.aiApiKey}`;
    let response: { status: number; data: unknown };
    try {
      response = await firstValueFrom(
        this.http.post(
          `${this.config.aiBaseUrl}/chat/completions`,
          {
            model: this.config.aiModel,
            messages,
            temperature: 0,
            response_format: {
              type: 'json_schema',
              json_schema: { name: 'form_configuration', schema: DRAFT_ANSWER_SCHEMA, strict: false },
            },
          },
          {
            headers,
            timeout: timeoutMs,
            signal: AbortSignal.timeout(timeoutMs),
            maxContentLength: MAX_ANSWER_BYTES,
            maxRedirects: 0,
            proxy: false,
            responseType: 'json',
            validateStatus: () => true,
          },
        ),
      );
    } catch (error) {
      throw outboundError(error, timeoutMs);
    }
    if (response.status < 200 || response.status >= 300)
      throw new AppError('AI_UNAVAILABLE', { details: { status: response.status } });
    const content = (response.data as { choices?: { message?: { content?: unknown } }[] } | null)
      ?.choices?.[0]?.message?.content;
    if (typeof content !== 'string') {
      throw new AppError('AI_INVALID_ANSWER', {
        validationErrors: [
          {
            field: 'choices[0].message.content',
            rule: 'chatCompletion',
            message: 'the answer holds no message text',
          },
        ],
      });
    }
    return content;
  }
}

/** A failed call as our error: a timeout (504) or an unreachable endpoint (502); nothing of the request. */
function outboundError(error: unknown, timeoutMs: number): AppError {
  const code = isAxiosError(error) ? error.code : (error as { code?: string } | null)?.code;
  if (code === 'ECONNABORTED' || code === 'ETIMEDOUT' || code === 'ERR_CANCELED' || code === 'ABORT_ERR')
    return new AppError('AI_TIMEOUT', { params: { timeoutMs }, details: { timeoutMs } });
  return new AppError('AI_UNAVAILABLE', {
    details: { reason: typeof code === 'string' ? code : 'REQUEST_FAILED' },
  });
}

@Module({
  imports: [HttpModule],
  providers: [OpenAiDraftProvider],
})
export class OpenAiDraftProviderModule {}
