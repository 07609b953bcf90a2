import type { RequestContext } from '../common/context/request-context';
import { siteOfNewRecord } from '../common/context/site-scope';
import type { ConfigRow } from '../form-configs/form-configs.repository';
import type { NewRecord } from './record-statements';

/**
 * The row of a record a caller creates, a submission or a draft alike: of the configuration row it
 * was validated against (already loaded: no extra query per create), the caller's, in the site the
 * submission came through (a shared form's record belongs to that site), with the submitted key
 * order stored beside the data (jsonb keeps its own key order).
 */
export function newRecordOf(
  ctx: RequestContext,
  config: ConfigRow,
  userId: string,
  data: Record<string, unknown>,
  stored: Pick<NewRecord, 'computedResults' | 'idempotencyKey'>,
): NewRecord {
  return {
    configId: config.id,
    configVersion: config.version,
    userId,
    siteId: siteOfNewRecord(ctx, config.siteId),
    data,
    dataKeys: Object.keys(data),
    ...stored,
  };
}
