import { integer, json, jsonb, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import {
  formConfigs,
  type ComputedRuleDefinition,
  type FormPreferences,
  type ValidationRuleDefinition,
} from './form-configs.table';

/**
 * Every version of a configuration, immutable once written (owned by the form-configs module): a
 * create writes version 1 and every update or restore the version it makes, in the transaction of
 * that change, so the newest row is the configuration's current content. A delete raises the
 * configuration's version (its ETag) but writes no row: a deleted form has no content to show.
 */
export const formConfigVersions = pgTable(
  'form_config_versions',
  {
    configId: uuid('config_id')
      .notNull()
      .references(() => formConfigs.id),
    version: integer('version').notNull(),
    /** created, updated, restored, or recorded (the migration that brought versions in). */
    action: text('action').notNull(),
    /** The version a restore brought back; null otherwise. */
    restoredFrom: integer('restored_from'),
    /** The fields that differ from the previous version (API names: schema, validationRules, ...). */
    changedParts: text('changed_parts').array().notNull(),
    authorId: uuid('author_id'),
    title: text('title').notNull(),
    type: text('type').notNull(),
    tags: jsonb('tags').$type<string[]>().notNull(),
    siteId: uuid('site_id'),
    description: text('description'),
    // json, as in form_configs: the property order is the form's field order.
    schema: json('schema').$type<Record<string, unknown> | null>(),
    validationRules: jsonb('validation_rules').$type<ValidationRuleDefinition[]>().notNull(),
    computedRules: jsonb('computed_rules').$type<ComputedRuleDefinition[]>().notNull(),
    preferences: jsonb('preferences').$type<FormPreferences>().notNull(),
    definition: json('definition'),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  // The key's index also serves the listing (newest first is a backward scan).
  (table) => [primaryKey({ name: 'form_config_versions_pkey', columns: [table.configId, table.version] })],
);
