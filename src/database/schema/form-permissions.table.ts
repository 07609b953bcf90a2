import { jsonb, pgTable, uuid } from 'drizzle-orm/pg-core';
import { createdAt, updatedAt } from './columns';
import { formConfigs } from './form-configs.table';

export const FORM_PERMISSIONS = [
  'viewForm',
  'createResults',
  'viewOwnResults',
  'viewAllResults',
  'editOwnResults',
  'deleteOwnResults',
  'exportResults',
  'viewStats',
  'executeWorkflows',
] as const;
export type FormPermissionName = (typeof FORM_PERMISSIONS)[number];

/** Per-configuration grants; a configuration without a row uses the defaults of DESIGN.md. */
export const formPermissions = pgTable('form_permissions', {
  configId: uuid('config_id')
    .primaryKey()
    .references(() => formConfigs.id),
  roles: jsonb('roles').$type<Record<string, FormPermissionName[]>>().notNull().default({}),
  users: jsonb('users').$type<Record<string, FormPermissionName[]>>().notNull().default({}),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});
