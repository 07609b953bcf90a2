import { boolean, index, integer, json, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { createdAt, primaryId, updatedAt } from './columns';
import { sites } from './sites.table';

export interface FormPreferences {
  saveLimit: number | null;
  allowEdit: boolean;
  allowDelete: boolean;
  storeComputedResults: boolean;
}

export interface ValidationRuleDefinition {
  name: string;
  rule: unknown;
  field?: string;
  message: string | Record<string, string>;
}

export interface ComputedRuleDefinition {
  field: string;
  expression: unknown;
}

export const formConfigs = pgTable(
  'form_configs',
  {
    id: primaryId(),
    title: text('title').notNull(),
    type: text('type').notNull(),
    tags: jsonb('tags').$type<string[]>().notNull().default([]),
    siteId: uuid('site_id').references(() => sites.id),
    description: text('description'),
    // json, not jsonb: the schema's property order is the form's field order (export columns).
    schema: json('schema').$type<Record<string, unknown> | null>(),
    validationRules: jsonb('validation_rules').$type<ValidationRuleDefinition[]>().notNull().default([]),
    computedRules: jsonb('computed_rules').$type<ComputedRuleDefinition[]>().notNull().default([]),
    preferences: jsonb('preferences').$type<FormPreferences>().notNull(),
    // The client's layout, kept exactly as sent (key order included).
    definition: json('definition'),
    isActive: boolean('is_active').notNull().default(true),
    createdBy: uuid('created_by'),
    /** Rises by one with every update and the delete; the configuration's ETag. */
    version: integer('version').notNull().default(1),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (table) => [index('form_configs_type_idx').on(table.type), index('form_configs_site_idx').on(table.siteId)],
);
