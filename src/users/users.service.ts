import { Injectable } from '@nestjs/common';
import { requireUser } from '../auth/auth.service';
import type { RequestContext } from '../common/context/request-context';
import { AppError } from '../common/errors/app-error';
import { isUuid } from '../common/validation/is-uuid';
import type { UpdateUserDto } from './dto/user.dto';
import { toUserResponse } from './user.mapper';
import { SitesRepository } from '../sites/sites.repository';
import { UserSessionCache } from './user-session.cache';
import { UsersRepository } from './users.repository';

@Injectable()
export class UsersService {
  constructor(
    private readonly users: UsersRepository,
    private readonly sessions: UserSessionCache,
    private readonly sites: SitesRepository,
  ) {}

  async list(_ctx: RequestContext, page = 1, limit = 100) {
    const { rows, total } = await this.users.listPage(limit, (page - 1) * limit);
    return { data: rows.map(toUserResponse), totalCount: total };
  }

  /** Admins read anyone; everyone else only themselves. */
  async get(ctx: RequestContext, userId: string) {
    this.assertSelfOrAdmin(ctx, userId);
    const user = isUuid(userId) ? await this.users.findById(userId) : null;
    if (!user) throw new AppError('USER_NOT_FOUND');
    return toUserResponse(user);
  }

  /** Admins change anything; a user changes only their own name and e-mail (never role, activity or site). */
  async update(ctx: RequestContext, userId: string, body: UpdateUserDto) {
    const caller = this.assertSelfOrAdmin(ctx, userId);
    if (
      caller.role !== 'admin' &&
      (body.role !== undefined || body.isActive !== undefined || body.siteId !== undefined)
    ) {
      throw new AppError('FORBIDDEN');
    }
    if (!isUuid(userId) || !(await this.users.findById(userId))) throw new AppError('USER_NOT_FOUND');
    const problems = [];
    if (body.role !== undefined && !(await this.users.roleExists(body.role))) {
      problems.push({ field: 'role', rule: 'exists', message: 'role does not name an existing role' });
    }
    if (body.siteId && !(await this.sites.isActive(body.siteId))) {
      problems.push({ field: 'siteId', rule: 'exists', message: 'siteId does not name an active site' });
    }
    if (problems.length > 0) throw new AppError('VALIDATION_FAILED', { validationErrors: problems });
    if (body.email !== undefined && (await this.users.emailTakenByOther(body.email, userId)))
      throw new AppError('EMAIL_TAKEN');

    const { user, lastAdmin } = await this.users.updateKeepingAnAdmin(userId, {
      ...(body.name !== undefined && { name: body.name }),
      ...(body.email !== undefined && { email: body.email }),
      ...(body.role !== undefined && { role: body.role }),
      ...(body.isActive !== undefined && { isActive: body.isActive }),
      ...(body.siteId !== undefined && { siteId: body.siteId }),
    });
    if (lastAdmin) throw new AppError('LAST_ADMIN');
    if (!user) throw new AppError('USER_NOT_FOUND');
    // Role, activity and site take effect on live tokens at once.
    await this.sessions.invalidate(userId);
    return toUserResponse(user);
  }

  private assertSelfOrAdmin(ctx: RequestContext, userId: string) {
    const caller = requireUser(ctx);
    if (caller.role !== 'admin' && caller.userId !== userId) throw new AppError('FORBIDDEN');
    return caller;
  }
}
