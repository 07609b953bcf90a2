import type { AuthUser } from '../../common/context/request-context';
import { AppError } from '../../common/errors/app-error';
import { namedRunAsUsers } from './trigger-matching';

/**
 * A definition whose trigger names a user to run as (`runAs: {user}`) is saved only by an admin or
 * by that user: anybody else would borrow the named user's rights (403 WORKFLOW_RUN_AS_FORBIDDEN).
 * Whether the named user may run the workflow is checked at every trigger, as an execute is.
 */
export function assertRunAsAllowed(author: AuthUser, config: Record<string, unknown>): void {
  if (author.role === 'admin') return;
  const other = namedRunAsUsers(config).find((userId) => userId !== author.userId);
  if (other) throw new AppError('WORKFLOW_RUN_AS_FORBIDDEN', { details: { runAs: { user: other } } });
}
