import type { PermissionMap } from '../database/schema';

/** The role whose permissions stay `*` on everything: emptying them would lock every admin out. */
export const ADMIN_ROLE = 'admin';

/** The roles seeded at start-up; they cannot be deleted. `*` grants every resource or action. */
export const SYSTEM_ROLES: { name: string; description: string; permissions: PermissionMap }[] = [
  { name: ADMIN_ROLE, description: 'Full access to everything', permissions: { '*': ['*'] } },
  {
    name: 'manager',
    description: 'Reads every submission of the forms they manage, exports them and sees statistics',
    permissions: {
      configs: ['read'],
      data: ['read', 'create', 'update', 'delete', 'export'],
      stats: ['read'],
      workflows: ['read', 'execute'],
      users: ['read'],
      roles: ['read'],
      sites: ['read'],
    },
  },
  {
    name: 'user',
    description: 'Fills in forms and manages their own submissions',
    permissions: {
      configs: ['read'],
      data: ['read', 'create', 'update', 'delete'],
      workflows: ['read', 'execute'],
      roles: ['read'],
      sites: ['read'],
    },
  },
];
