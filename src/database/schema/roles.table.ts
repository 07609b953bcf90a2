import { boolean, jsonb, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { createdAt, primaryId, updatedAt } from './columns';

/** `{resource: action[]}`; `'*'` as resource or action grants everything. */
export type PermissionMap = Record<string, string[]>;

export const roles = pgTable(
  'roles',
  {
    id: primaryId(),
    name: text('name').notNull(),
    description: text('description').notNull().default(''),
    permissions: jsonb('permissions').$type<PermissionMap>().notNull().default({}),
    isSystem: boolean('is_system').notNull().default(false),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (table) => [uniqueIndex('roles_name_unique').on(table.name)],
);
