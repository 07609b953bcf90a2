import {
  buildRequestContext,
  type AuthUser,
  type RequestContext,
} from '../../src/common/context/request-context';
import type { TestUser } from '../factories/user.factory';

/**
 * A fresh request context for a test user, built outside HTTP as a workflow run or a job builds
 * one (`siteId`: the site of the Host it works through, none by default). Fresh per call: a context
 * looks form access up once.
 */
export function contextOf(user: TestUser['user'], siteId: string | null = null): RequestContext {
  return buildRequestContext({
    user: { userId: user.id, role: user.role, email: user.email, siteId: user.siteId } satisfies AuthUser,
    siteId,
  });
}
