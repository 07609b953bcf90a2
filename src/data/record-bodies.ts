import { AppError } from '../common/errors/app-error';
import { StoreFormBody } from '../common/http/form-body';
import { storeValuesToFields } from './record-changes';
import { RECORD_PART } from './record-with-files.service';

/* The bodies the records routes take besides JSON, and their OpenAPI schemas. */

export const SUBMISSION_EXAMPLE = { name: 'Jane Doe', email: 'jane@example.com', qty: 3, price: 9.5 };
export const FORM = 'application/x-www-form-urlencoded';
export const STORE_VALUES = {
  type: 'string' as const,
  description: 'JSON object of field values; keys `data.<field>` (the grid column names) mean `<field>`',
  example: '{"data.name":"Jane Doe","data.qty":3}',
};
/** A record with its files in one multipart body (README "Attachments"). */
export const RECORD_WITH_FILES = {
  type: 'object' as const,
  required: [RECORD_PART],
  description:
    'A `record` part (the field values as JSON) and file parts named by their attachment field (repeated for an ' +
    "array field), uploaded as they arrive and linked in the record's create; a refused record stores no file.",
  properties: { [RECORD_PART]: { type: 'string', example: JSON.stringify(SUBMISSION_EXAMPLE) } },
  additionalProperties: {
    type: 'string',
    format: 'binary',
    description: 'A file, its part named by its attachment field (`photo`)',
  },
};
export const STORE_KEY = { type: 'string', format: 'uuid', description: 'the record id (`_id`)' };

/** The JSON body, or the field values of a grid-library store's `values=<JSON>` form (docs/grid-protocol.md section 16). */
export function submittedFields(body: unknown): unknown {
  return body instanceof StoreFormBody ? storeValuesToFields(body.values ?? {}) : body;
}

/** The store's form body of an update or remove; a JSON body is a 415 here (it has no record id). */
export function storeForm(body: unknown): StoreFormBody & { key: string } {
  if (!(body instanceof StoreFormBody) || body.key === undefined) {
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', {
      messageKey: 'errors.FORM_BODY_UNSUPPORTED',
      details: {
        reason: 'this route takes the grid store form body; JSON clients use /api/data/:configId/:dataId',
        accepted: `${FORM}: key=<id>&values=<JSON object> (PUT), key=<id> (DELETE)`,
      },
    });
  }
  return body as StoreFormBody & { key: string };
}
