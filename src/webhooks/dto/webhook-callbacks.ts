import { getSchemaPath } from '@nestjs/swagger';
import { EVENT_TYPES, type EventType } from '../../events/domain-event';
import { WebhookRecordEventDto, WebhookRunFinishedEventDto } from './webhook-event.dto';

const RECORD = {
  _id: '5f0c3b52-8f5e-4b8e-9d1a-0d4f3c2b1a00',
  configId: '0b6a9f4e-3c1d-4e2f-8a7b-6c5d4e3f2a10',
  userId: '7d2e1f0a-9b8c-4d7e-a6f5-e4d3c2b1a020',
  siteId: null,
  data: { name: 'Jane', qty: 4 },
  computedResults: {},
  isActive: true,
  createdAt: '2026-11-24T10:00:00.000Z',
  updatedAt: '2026-11-24T10:05:00.000Z',
  deletedAt: null,
};

/** One example body per event type (the README shows the same ones). */
export const EVENT_EXAMPLES: Record<EventType, object> = {
  'record.created': {
    type: 'record.created',
    timestamp: '2026-11-24T10:00:00.000Z',
    data: {
      record: { ...RECORD, data: { name: 'Jane', qty: 3 }, updatedAt: RECORD.createdAt },
      changes: { name: { after: 'Jane' }, qty: { after: 3 } },
      historyId: 41,
    },
  },
  'record.updated': {
    type: 'record.updated',
    timestamp: '2026-11-24T10:05:00.000Z',
    data: { record: RECORD, changes: { qty: { before: 3, after: 4 } }, historyId: 42 },
  },
  'record.deleted': {
    type: 'record.deleted',
    timestamp: '2026-11-24T10:06:00.000Z',
    data: {
      record: { ...RECORD, isActive: false, deletedAt: '2026-11-24T10:06:00.000Z' },
      changes: {},
      historyId: 43,
    },
  },
  'record.restored': {
    type: 'record.restored',
    timestamp: '2026-11-24T10:07:00.000Z',
    data: { record: RECORD, changes: {}, historyId: 44 },
  },
  'record.imported': {
    type: 'record.imported',
    timestamp: '2026-11-24T10:00:00.000Z',
    data: {
      record: { ...RECORD, data: { name: 'Jane', qty: 3 }, updatedAt: RECORD.createdAt },
      changes: { name: { after: 'Jane' }, qty: { after: 3 } },
      historyId: 45,
    },
  },
  'record.draft_saved': {
    type: 'record.draft_saved',
    timestamp: '2026-11-24T09:30:00.000Z',
    data: {
      record: { ...RECORD, data: { name: 'Jane' }, status: 'draft', updatedAt: '2026-11-24T09:30:00.000Z' },
      changes: { name: { after: 'Jane' } },
      historyId: 40,
    },
  },
  'workflow.run.finished': {
    type: 'workflow.run.finished',
    timestamp: '2026-11-24T10:00:01.000Z',
    data: {
      run: {
        id: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c60',
        workflowId: '1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e50',
        status: 'success',
        message: null,
        configId: RECORD.configId,
        dataId: RECORD._id,
        userId: RECORD.userId,
        startedAt: '2026-11-24T10:00:00.880Z',
        finishedAt: '2026-11-24T10:00:01.000Z',
        durationMs: 120,
      },
    },
  },
};

const header = (name: string, description: string, example: string) => ({
  name,
  in: 'header',
  required: true,
  description,
  schema: { type: 'string' },
  example,
});

const HEADERS = [
  header(
    'webhook-id',
    'The event id: the same on every attempt and redelivery (deduplicate by it)',
    RECORD._id,
  ),
  header('webhook-timestamp', 'Unix seconds of this attempt', '1795946400'),
  header(
    'webhook-signature',
    '`v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`, keyed by the base64-decoded part of the ' +
      'secret after `whsec_`; during a rotation grace period a second one (the previous secret), space-separated',
    'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
  ),
];

function delivery(type: EventType) {
  const schema = type.startsWith('record.') ? WebhookRecordEventDto : WebhookRunFinishedEventDto;
  return {
    '{$request.body#/url}': {
      post: {
        summary: `A \`${type}\` delivery`,
        parameters: HEADERS,
        requestBody: {
          required: true,
          content: {
            'application/json': { schema: { $ref: getSchemaPath(schema) }, example: EVENT_EXAMPLES[type] },
          },
        },
        responses: {
          '200': { description: 'Any 2xx: delivered' },
          '429': { description: 'Retried with backoff (Retry-After honoured up to 1 hour), as 408 and 5xx' },
          '400': { description: 'Any other answer, a 3xx included (never followed): failed at once' },
        },
      },
    },
  };
}

/** The deliveries a subscription gets, one callback per event type, for the create operation's document. */
export const WEBHOOK_CALLBACKS = Object.fromEntries(EVENT_TYPES.map((type) => [type, delivery(type)]));
