/** The guarded outbound HTTP client: what its users (the `api` workflow step, webhooks) import. */
export { OutboundHttpModule } from './outbound-http.module';
export {
  DEFAULT_MAX_RESPONSE_BYTES,
  MAX_TIMEOUT_MS,
  OutboundHttpService,
  type OutboundRequest,
  type OutboundResponse,
} from './outbound-http.service';
export { OutboundHttpError } from './outbound-http.error';
export { OutboundErrorCode } from './outbound-errors';
export type { HttpMethod } from './redirects';
export type { StreamedBody } from './streamed-body';
export { parseRetryAfter } from './retry-after';
