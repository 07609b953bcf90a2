import { jsonb, pgTable, uuid } from 'drizzle-orm/pg-core';
import { createdAt, updatedAt } from './columns';
import { formConfigs } from './form-configs.table';

/**
 * Per-configuration grants (permission names of the permissions module); a configuration without a
 * row uses the defaults of docs/design.md section 5.
 */
export const formPermissions = pgTable('form_permissions', {
  configId: uuid('config_id')
    .primaryKey()
    .references(() => formConfigs.id),
  roles: jsonb('roles').$type<Record<string, string[]>>().notNull().default({}),
  users: jsonb('users').$type<Record<string, string[]>>().notNull().default({}),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});
