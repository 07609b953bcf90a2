import { Injectable } from '@nestjs/common';
import type { Parametrized } from '../../database/built-statement';
import {
  buildRequestContext,
  type AuthUser,
  type RequestContext,
} from '../../common/context/request-context';
import { mayWorkThroughSite } from '../../common/context/site-binding';
import { AppError } from '../../common/errors/app-error';
import type { Locale } from '../../common/i18n/locale';
import { FormAccessService } from '../../permissions/form-access.service';
import { RolePermissions } from '../../roles/role-permissions.service';
import { UsersService } from '../../users/users.service';
import type { FormAccessNeed } from '../sdk/step-handler';
import { WorkflowsService } from '../definitions/workflows.service';

/** Who started a run and through which host, as stored on the run. */
export interface RunOrigin {
  actor: AuthUser;
  siteId: string | null;
  locale: Locale;
  requestId: string;
  configId: string;
}

/**
 * The caller of a run as they are now. A run outlives its request (a queued run, a retry wait), so
 * before it goes on to do something on the caller's behalf it asks the same questions a request
 * would: is the account still active (else USER_INACTIVE), may it still work through the run's host,
 * does its role still hold `workflows:execute`, may it still run this workflow and execute
 * workflows on the form (else FORBIDDEN, or the 404 code of what it can no longer see); and, before
 * each attempt of a step with an effect, may it still do what that step does (`requireStepAccess`).
 */
@Injectable()
export class RunCaller {
  constructor(
    private readonly users: UsersService,
    private readonly rolePermissions: RolePermissions,
    private readonly workflows: WorkflowsService,
    private readonly formAccess: FormAccessService,
  ) {}

  /**
   * A fresh context with the caller as stored now; throws the AppError that refuses them. `read`:
   * what the run's last write answered for `accountRead` (that statement's read of the account),
   * instead of a statement of its own.
   */
  async recheck(origin: RunOrigin, workflowId: string, read?: unknown): Promise<RequestContext> {
    // From the database, not a cache: a demotion a moment ago must count before the next effect.
    const account =
      read === undefined
        ? await this.users.currentFromDatabase(origin.actor.userId)
        : this.users.accountFromRead(read);
    if (!account || !account.isActive) throw new AppError('USER_INACTIVE');
    const user: AuthUser = {
      userId: account.id,
      role: account.role,
      email: account.email,
      siteId: account.siteId,
    };
    if (!mayWorkThroughSite(user, origin.siteId)) throw new AppError('FORBIDDEN');
    if (!(await this.rolePermissions.allows(user.role, 'workflows', 'execute')))
      throw new AppError('FORBIDDEN');
    // A new context object: form access is remembered per context, and this question is a new one.
    const ctx = buildRequestContext({
      user,
      siteId: origin.siteId,
      locale: origin.locale,
      requestId: origin.requestId,
    });
    await this.workflows.requireRunnable(ctx, workflowId);
    await this.formAccess.require(ctx, origin.configId, 'executeWorkflows');
    return ctx;
  }

  /** The read of the caller's account a run's write can return, for the check before the next step. */
  accountRead(origin: RunOrigin): Parametrized {
    return this.users.accountRead(origin.actor.userId);
  }

  /**
   * What the next step does, asked for the caller of `ctx` (a context of the last re-check): each
   * form permission it needs (a `save`: `createResults` on its form); throws the refusing AppError
   * (FORBIDDEN, or CONFIG_NOT_FOUND for a form they can no longer see).
   */
  async requireStepAccess(ctx: RequestContext, needs: readonly FormAccessNeed[]): Promise<void> {
    for (const need of needs) await this.formAccess.require(ctx, need.configId, need.permission);
  }
}
