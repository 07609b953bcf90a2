import { Inject, Optional } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../../config/app-config';
import {
  containsSecret,
  envSecrets,
  redact,
  redactedExcerpt,
  SecretOrigins,
  type SecretOriginRefusal,
  StepError,
  StepFiles,
  type CompensationOutcome,
  type StepContext,
  type StepOutcome,
  type WorkflowStepHandler,
  WorkflowStep,
} from '../../sdk';
import { ApiStepConfig } from './api-step.config';
import { fileBody, recordFileToSend, type FileBody, type TextPart } from './file-body';
import {
  OutboundErrorCode,
  OutboundHttpError,
  OutboundHttpService,
  type OutboundRequest,
  type OutboundResponse,
  type HttpMethod,
  parseRetryAfter,
} from '../../../common/outbound-http';
import { renderUrl } from './url-template';

/** The step result has status and data (docs/design.md section 6). */
export interface ApiStepResult {
  status: number;
  data: unknown;
}

/** What one request of the step is made of (the step itself, or its compensating request). */
interface RequestParts {
  method?: HttpMethod;
  url: string;
  headers?: Record<string, string>;
  payload?: string | Record<string, unknown>;
  /** The body `file` makes (the file, or a multipart body with it and the payload). */
  file?: FileBody;
}

/** How much of an error answer's body goes into the step log. */
const MAX_LOGGED_DATA_CHARS = 2048;

@WorkflowStep({
  type: 'api',
  config: ApiStepConfig,
  replayable: false,
  // The url is rendered by the handler: values in it are encoded and may not move its origin.
  rawFields: ['url', 'compensate'],
  // `payload` is only checked to be a string or an object: templates inside an object keep it one.
  freeFields: ['payload'],
  sends: [
    { url: 'url', carries: ['url', 'headers', 'payload'] },
    { url: 'compensate.url', carries: ['compensate'] },
  ],
  description: 'Calls an HTTP(S) endpoint; the result holds the answer status and data',
})
export class ApiStep implements WorkflowStepHandler<ApiStepConfig, ApiStepResult> {
  private readonly envAllowlist: readonly string[];
  private readonly secretOrigins: SecretOrigins;

  constructor(
    private readonly outbound: OutboundHttpService,
    @Inject(APP_CONFIG) config: AppConfig,
    // Absent where the workflow module is not (a unit test of this module): `file` then has no record.
    @Optional() private readonly files?: StepFiles,
  ) {
    this.envAllowlist = config.workflowEnvAllowlist;
    this.secretOrigins = SecretOrigins.of(config);
  }

  async execute(context: StepContext, config: ApiStepConfig): Promise<StepOutcome<ApiStepResult>> {
    const url = renderUrl(config.url, (path) => context.render(`{{${path}}}`));
    const file = config.file
      ? fileBody(
          await recordFileToSend(this.files, context, config.file.field),
          config.file,
          payloadPart(config.payload),
        )
      : undefined;
    const secrets = envSecrets(this.envAllowlist);
    const response = await this.send({ ...config, url, file }, config, context.signal, secrets);
    // Redacted as it enters the run: later steps (a notify mail) never read an echoed secret.
    return { result: { status: response.status, data: redact(response.data, secrets) } };
  }

  async compensate(
    context: StepContext,
    config: ApiStepConfig,
    result: ApiStepResult,
  ): Promise<CompensationOutcome> {
    if (!config.compensate) return { status: 'not_compensable' };
    const render = (template: string) => context.render(template, { extra: { result } });
    const { url, ...rest } = config.compensate;
    const rendered = { ...renderStrings(rest, render), url: renderUrl(url, (path) => render(`{{${path}}}`)) };
    const response = await this.send(rendered, config, context.signal, envSecrets(this.envAllowlist));
    return { status: 'compensated', detail: { status: response.status } };
  }

  /** Sends one request; an answer outside 2xx fails the step. */
  private async send(
    parts: RequestParts,
    limits: ApiStepConfig,
    signal: AbortSignal,
    secrets: ReadonlySet<string>,
  ): Promise<OutboundResponse> {
    const { templated, ...request } = toRequest(parts);
    // Judged on what is sent, whichever template (or earlier step) put a value there.
    const refused = this.secretOrigins.refusalOf({ ...request, body: templated });
    if (refused) throw secretOriginError(refused, this.secretOrigins.boundTo(refused.name));
    const response = await this.outbound
      .request({
        ...request,
        timeoutMs: limits.timeoutMs,
        maxResponseBytes: limits.maxResponseBytes,
        signal,
        // What holds an env value is judged by what is sent, whichever template put it there.
        confined: {
          headers: Object.entries(request.headers)
            .filter(([, value]) => containsSecret(value, secrets))
            .map(([name]) => name),
          body: templated !== undefined && containsSecret(templated, secrets),
        },
      })
      .catch((error: unknown) => {
        throw error instanceof OutboundHttpError ? stepErrorOf(error) : error;
      });
    if (response.status < 200 || response.status > 299) throw httpStatusError(response, secrets);
    return response;
  }
}

/**
 * The request of the parts: the payload as the body, or the body `file` made; the step's own
 * Content-Type header wins. `templated` is the text templates wrote into the body (the payload),
 * where an env value could be; a file's bytes are the record's, no template's.
 */
function toRequest(parts: RequestParts): Pick<OutboundRequest, 'method' | 'url' | 'body'> & {
  headers: Record<string, string>;
  templated?: string;
} {
  const headers = { ...parts.headers };
  const hasContentType = Object.keys(headers).some((name) => name.toLowerCase() === 'content-type');
  const payload = payloadPart(parts.payload);
  const contentType = parts.file?.contentType ?? payload?.contentType;
  if (contentType !== undefined && !hasContentType) headers['content-type'] = contentType;
  const body = parts.file?.body ?? payload?.text;
  return { method: parts.method ?? 'GET', url: parts.url, headers, body, templated: payload?.text };
}

/** An object payload is sent as JSON; a string as is, labelled JSON when it parses as JSON. */
function payloadPart(payload: RequestParts['payload']): TextPart | undefined {
  if (typeof payload === 'string')
    return { text: payload, contentType: isJson(payload) ? 'application/json' : 'text/plain; charset=utf-8' };
  if (payload !== undefined && payload !== null)
    return { text: JSON.stringify(payload), contentType: 'application/json' };
  return undefined;
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** The client's failure as the step's: same code, message, retry verdict and details. */
function stepErrorOf(error: OutboundHttpError): StepError {
  return new StepError(error.message, {
    code: error.code,
    retryable: error.retryable,
    details: error.details,
  });
}

function httpStatusError(response: OutboundResponse, secrets: ReadonlySet<string>): StepError {
  const { status } = response;
  const retryable = status >= 500 || status === 408 || status === 429;
  const retryAfter = response.headers['retry-after'];
  return new StepError(`The server answered ${status}`, {
    code: 'HTTP_STATUS',
    retryable,
    retryAfterMs:
      status === 429 || status === 503
        ? parseRetryAfter(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter)
        : undefined,
    details: { status, data: redactedExcerpt(response.data, secrets, MAX_LOGGED_DATA_CHARS) },
  });
}

/** An env value on its way to an origin WORKFLOW_ENV_ORIGINS does not bind it to: nothing is sent. */
function secretOriginError(refused: SecretOriginRefusal, boundTo: readonly string[]): StepError {
  const bound = boundTo.length > 0 ? boundTo.join(', ') : 'no origin';
  return StepError.fatal(
    OutboundErrorCode.SECRET_ORIGIN_REFUSED,
    `The value of {{env.${refused.name}}} may not be sent to ${refused.origin} (WORKFLOW_ENV_ORIGINS binds it to ${bound}); nothing was sent`,
    { details: { env: refused.name, origin: refused.origin, allowedOrigins: [...boundTo] } },
  );
}

/** Renders every string leaf of a value (the compensating request is left raw by the runner). */
function renderStrings<T>(value: T, render: (template: string) => string): T {
  if (typeof value === 'string') return render(value) as T;
  if (Array.isArray(value)) return value.map((item: unknown) => renderStrings(item, render)) as T;
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, renderStrings(item as unknown, render)]),
    ) as T;
  }
  return value;
}
