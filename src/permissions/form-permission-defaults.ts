import { FORM_PERMISSIONS, type FormPermissionName } from './form-permission-names';

const OWN_RESULTS: FormPermissionName[] = [
  'viewForm',
  'createResults',
  'viewOwnResults',
  'editOwnResults',
  'deleteOwnResults',
  'executeWorkflows',
];

/**
 * Grants of a configuration without its own permission record (docs/design.md section 5): `user` (and any custom
 * role) gets the own-results set, `manager` adds all results, export and statistics, `admin` all.
 */
export function defaultFormPermissions(role: string): FormPermissionName[] {
  if (role === 'admin') return [...FORM_PERMISSIONS];
  if (role === 'manager') return [...OWN_RESULTS, 'viewAllResults', 'exportResults', 'viewStats'];
  return [...OWN_RESULTS];
}
