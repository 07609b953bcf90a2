/** The form-level permissions a role or a user may hold on a configuration (docs/design.md section 5). */
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
  /** Bulk import of records (POST /api/data/:configId/import); by default admins only. */
  'importResults',
] as const;
export type FormPermissionName = (typeof FORM_PERMISSIONS)[number];
