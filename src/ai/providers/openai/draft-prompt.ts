import type { FieldError } from '../../../common/errors/app-error';
import type { Locale } from '../../../common/i18n/locale';
import type { ConfigDraftRequest } from '../config-draft-provider';

/** Samples are sent until their JSON reaches this many characters (and at most 50 of them). */
const SAMPLE_TEXT_BUDGET = 40_000;
const MAX_SAMPLES_SENT = 50;

const LANGUAGES: Record<Locale, string> = { en: 'English', hu: 'Hungarian' };

/** The JSON Schema the model's answer is constrained by (`response_format.json_schema.schema`). */
export const DRAFT_ANSWER_SCHEMA = {
  type: 'object',
  properties: {
    title: { type: 'string', minLength: 1, maxLength: 200 },
    type: { type: 'string', enum: ['form', 'grid', 'tree'] },
    tags: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 50 }, maxItems: 50 },
    description: { type: ['string', 'null'], maxLength: 5000 },
    schema: {
      type: 'object',
      description: 'JSON Schema (2020-12) of one submitted record: type object with properties',
    },
    validationRules: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          name: { type: 'string' },
          rule: { description: 'JSONLogic, truthy when the record is valid' },
          field: { type: 'string' },
          message: { type: 'string' },
        },
        required: ['name', 'rule', 'message'],
        additionalProperties: false,
      },
    },
    computedRules: {
      type: 'array',
      items: {
        type: 'object',
        properties: { field: { type: 'string' }, expression: { description: 'JSONLogic' } },
        required: ['field', 'expression'],
        additionalProperties: false,
      },
    },
    preferences: {
      type: 'object',
      properties: {
        saveLimit: { type: ['integer', 'null'], minimum: 1 },
        allowEdit: { type: 'boolean' },
        allowDelete: { type: 'boolean' },
        storeComputedResults: { type: 'boolean' },
      },
      additionalProperties: false,
    },
  },
  required: ['title', 'schema'],
  additionalProperties: false,
} as const;

export function systemMessage(locale: Locale): string {
  return [
    'You design data-collection form configurations for a form service.',
    'Answer with one JSON object and nothing else, with these keys:',
    '- title: short form title; type: "form" (default), "grid" or "tree"; tags: short strings;',
    '- schema: a JSON Schema (draft 2020-12) of one submitted record: {"type":"object","properties":{...},"required":[...]}.',
    '  Give every property a "title". Use "integer", "number", "boolean", "string" (with "format" email, date, date-time or uri where it fits), "enum", "minimum", "maximum", "minLength", "maxLength", nested objects and arrays.',
    '- validationRules: [{"name","rule","field","message"}] where rule is JSONLogic that is truthy for a valid record, e.g. {">=":[{"var":"age"},18]}; only standard JSONLogic operators; "var" paths are literal field names.',
    '- computedRules: [{"field","expression"}] where expression is JSONLogic computing a value from the record.',
    '- preferences: {"saveLimit": null or a positive integer, "allowEdit", "allowDelete", "storeComputedResults"}.',
    'Field names are ASCII letters, digits, "_" or "-" (camelCase preferred).',
    `Write titles, descriptions and messages in ${LANGUAGES[locale]}.`,
  ].join('\n');
}

/** The request as the user message; `sent` is how many samples fit in it. */
export function userMessage(request: ConfigDraftRequest): { text: string; sent: number } {
  const parts: string[] = [];
  if (request.prompt) parts.push(`Form description:\n${request.prompt}`);
  if (request.type) parts.push(`Configuration type: ${request.type}`);
  if (request.title) parts.push(`Title: ${request.title}`);
  let sent = 0;
  if (request.samples && request.samples.length > 0) {
    const lines: string[] = [];
    let length = 0;
    for (const sample of request.samples.slice(0, MAX_SAMPLES_SENT)) {
      const line = JSON.stringify(sample);
      if (sent > 0 && length + line.length > SAMPLE_TEXT_BUDGET) break;
      lines.push(line);
      length += line.length;
      sent++;
    }
    parts.push(
      `Sample records (${sent} of ${request.samples.length}, one JSON object per line):\n${lines.join('\n')}`,
    );
  }
  return { text: parts.join('\n\n'), sent };
}

export function repairMessage(problems: FieldError[]): string {
  const list = problems.map((p) => `- ${p.field}: ${p.message} (${p.rule})`).join('\n');
  return `The form service refused that configuration:\n${list}\nAnswer again with the whole corrected JSON object.`;
}
