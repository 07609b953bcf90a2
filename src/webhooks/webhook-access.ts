import type { RequestContext } from '../common/context/request-context';
import { requireUser } from '../common/context/request-context';
import { AppError } from '../common/errors/app-error';

/** Webhooks are the admins' alone: every service method asks this first, whoever calls it. */
export function requireAdmin(ctx: RequestContext): void {
  if (requireUser(ctx).role !== 'admin') throw new AppError('FORBIDDEN');
}
