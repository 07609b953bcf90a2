import { randomBytes } from 'node:crypto';
import { Injectable, OnModuleInit } from '@nestjs/common';
import { requireAdmin, requireUser, type RequestContext } from '../common/context/request-context';
import { AppError, type FieldError } from '../common/errors/app-error';
import { isUuid } from '../common/validation/is-uuid';
import { RoleHolders } from '../roles/role-holders';
import { RolesService } from '../roles/roles.service';
import { SitesService } from '../sites/sites.service';
import { PasswordHasher } from '../common/security/password-hasher';
import type { CreateUserDto, UpdateUserDto, UserListDto, UserResponseDto } from './dto/user.dto';
import { toUserResponse } from './user.mapper';
import { UserSessionCache, type UserSession } from './user-session.cache';
import type { Parametrized } from '../database/built-statement';
import { standingFromJson, UsersRepository, type NewUser, type UserRow } from './users.repository';

/** Users: the admin and self-service routes, and the account operations the auth module uses. */
@Injectable()
export class UsersService implements OnModuleInit {
  constructor(
    private readonly users: UsersRepository,
    private readonly sessions: UserSessionCache,
    private readonly roles: RolesService,
    private readonly roleHolders: RoleHolders,
    private readonly sites: SitesService,
    private readonly passwords: PasswordHasher,
  ) {}

  onModuleInit(): void {
    // Users hold roles by name: a role a user holds cannot be renamed or deleted.
    this.roleHolders.register((roleName) => this.users.anyWithRole(roleName));
  }

  /** Every account (admins only, whoever calls: the route's guard holds it too). */
  async list(ctx: RequestContext, page = 1, limit = 100): Promise<UserListDto> {
    requireAdmin(ctx);
    const { rows, total } = await this.users.listPage(limit, (page - 1) * limit);
    return { data: rows.map(toUserResponse), totalCount: total };
  }

  /** An account made by an admin, with any role and site (the route for it is admin-only too). */
  async create(ctx: RequestContext, body: CreateUserDto): Promise<UserResponseDto> {
    requireAdmin(ctx);
    const role = body.role ?? 'user';
    await this.assertRoleAndSite(role, body.siteId);
    const user = await this.users.insertUnlessEmailTaken({
      email: body.email,
      name: body.name,
      passwordHash: await this.passwords.hash(body.password),
      role,
      siteId: body.siteId ?? null,
    });
    if (!user) throw new AppError('EMAIL_TAKEN');
    return toUserResponse(user);
  }

  /**
   * The operator's command line (`npm run admin`), not reachable from HTTP: makes the account of
   * `email` an active admin with this password, creating it when missing. A reset revokes every
   * earlier token of the account.
   */
  async provisionAdminForOperator(input: {
    email: string;
    name: string;
    password: string;
  }): Promise<{ outcome: 'created' | 'reset'; user: UserResponseDto }> {
    const passwordHash = await this.passwords.hash(input.password);
    const existing = await this.users.findByEmail(input.email);
    if (!existing) {
      const created = await this.users.insertUnlessEmailTaken({
        email: input.email,
        name: input.name,
        passwordHash,
        role: 'admin',
        siteId: null,
      });
      if (created) return { outcome: 'created', user: toUserResponse(created) };
      // Registered a moment ago by someone else: reset that account below.
    }
    const target = existing ?? (await this.users.findByEmail(input.email));
    if (!target) throw new AppError('USER_NOT_FOUND');
    const promoted = await this.users.updateKeepingAnAdmin(target.id, { role: 'admin', isActive: true });
    if (promoted.outcome !== 'updated') throw new AppError('USER_NOT_FOUND');
    const reset = await this.replacePassword(target.id, passwordHash);
    if (!reset) throw new AppError('USER_NOT_FOUND');
    return { outcome: 'reset', user: toUserResponse(reset) };
  }

  /** Admins read anyone; everyone else only themselves. */
  async get(ctx: RequestContext, userId: string): Promise<UserResponseDto> {
    this.assertSelfOrAdmin(ctx, userId);
    const user = isUuid(userId) ? await this.users.findById(userId) : null;
    if (!user) throw new AppError('USER_NOT_FOUND');
    return toUserResponse(user);
  }

  /** Admins change anything; a user changes only their own name and e-mail (never role, activity or site). */
  async update(ctx: RequestContext, userId: string, body: UpdateUserDto): Promise<UserResponseDto> {
    const caller = this.assertSelfOrAdmin(ctx, userId);
    if (
      caller.role !== 'admin' &&
      (body.role !== undefined || body.isActive !== undefined || body.siteId !== undefined)
    ) {
      throw new AppError('FORBIDDEN');
    }
    if (!isUuid(userId) || !(await this.users.findById(userId))) throw new AppError('USER_NOT_FOUND');
    await this.assertRoleAndSite(body.role, body.siteId);

    const result = await this.users.updateKeepingAnAdmin(userId, {
      ...(body.name !== undefined && { name: body.name }),
      ...(body.email !== undefined && { email: body.email }),
      ...(body.role !== undefined && { role: body.role }),
      ...(body.isActive !== undefined && { isActive: body.isActive }),
      ...(body.siteId !== undefined && { siteId: body.siteId }),
    });
    if (result.outcome === 'lastAdmin') throw new AppError('LAST_ADMIN');
    if (result.outcome === 'emailTaken') throw new AppError('EMAIL_TAKEN');
    if (result.outcome === 'notFound') throw new AppError('USER_NOT_FOUND');
    // Role, activity and site take effect on live tokens at once.
    await this.sessions.invalidate(userId);
    return toUserResponse(result.user);
  }

  findById(userId: string): Promise<UserRow | null> {
    return isUuid(userId) ? this.users.findById(userId) : Promise.resolve(null);
  }

  /**
   * The account as it is now (active, role, site), for work that outlives the request that started
   * it (a queued workflow run): the view token checks use, dropped in every process on each change.
   */
  current(userId: string): Promise<UserSession | null> {
    return isUuid(userId) ? this.sessions.get(userId) : Promise.resolve(null);
  }

  /**
   * The account as the database holds it this moment, past every cache: for the checks a workflow
   * run makes before it acts for its caller again (a role or site changed a moment ago counts).
   */
  currentFromDatabase(userId: string): Promise<UserSession | null> {
    return isUuid(userId) ? this.users.findStanding(userId) : Promise.resolve(null);
  }

  /**
   * The same read as an expression for another module's statement to return (a workflow run's write
   * before a step with an effect), so the check after it needs no statement of its own; its answer
   * goes to `accountFromRead`.
   */
  accountRead(userId: string): Parametrized {
    return this.users.standingExpression(isUuid(userId) ? userId : null);
  }

  /** The account an `accountRead` answered: null when there is no such account. */
  accountFromRead(answer: unknown): UserSession | null {
    return standingFromJson(answer);
  }

  findByEmail(email: string): Promise<UserRow | null> {
    return this.users.findByEmail(email);
  }

  /** A new account, or null when the e-mail is taken (the unique index decides, so races are safe). */
  createUnlessEmailTaken(user: NewUser): Promise<UserRow | null> {
    return this.users.insertUnlessEmailTaken(user);
  }

  /** Sets a new password hash and revokes every earlier token of the user. */
  async replacePassword(userId: string, passwordHash: string): Promise<UserRow | null> {
    const updated = await this.users.replacePasswordAndRevokeTokens(userId, passwordHash);
    await this.sessions.invalidate(userId);
    return updated;
  }

  /**
   * The first step of an erasure (the erasure module, admin-checked there): the account stops
   * working at once (no new record, no queued run of theirs goes on). 409 `LAST_ADMIN` for the
   * only active admin; 404 for no such account. Repeating it changes nothing.
   */
  async deactivateForErasure(userId: string): Promise<UserRow> {
    const user = await this.findById(userId);
    if (!user) throw new AppError('USER_NOT_FOUND');
    if (!user.isActive) return user;
    const result = await this.users.updateKeepingAnAdmin(userId, { isActive: false });
    if (result.outcome === 'lastAdmin') throw new AppError('LAST_ADMIN');
    if (result.outcome !== 'updated') throw new AppError('USER_NOT_FOUND');
    await this.sessions.invalidate(userId);
    return result.user;
  }

  /**
   * The last step of an erasure: the account stays (its id is named by history entries and runs)
   * but holds nothing of the person: e-mail `erased-<id>@erased.invalid`, name "Erased user", a
   * random password, every token revoked. False when it was so already (a repeat) or is gone.
   */
  async anonymizeErased(userId: string): Promise<boolean> {
    const email = `erased-${userId}@erased.invalid`;
    const user = await this.findById(userId);
    if (!user || user.email === email) return false;
    await this.users.anonymize(userId, {
      email,
      name: 'Erased user',
      passwordHash: await this.passwords.hash(randomBytes(32).toString('base64url')),
    });
    await this.sessions.invalidate(userId);
    return true;
  }

  /** 422 naming each of a role that does not exist and a site that is not active (undefined: not given). */
  private async assertRoleAndSite(
    role: string | undefined,
    siteId: string | null | undefined,
  ): Promise<void> {
    const problems: FieldError[] = [];
    if (role !== undefined && !(await this.roles.exists(role))) {
      problems.push({ field: 'role', rule: 'exists', message: 'role does not name an existing role' });
    }
    const siteProblem = await this.sites.siteIdProblem(siteId);
    if (siteProblem) problems.push(siteProblem);
    if (problems.length > 0) throw new AppError('VALIDATION_FAILED', { validationErrors: problems });
  }

  private assertSelfOrAdmin(ctx: RequestContext, userId: string) {
    const caller = requireUser(ctx);
    if (caller.role !== 'admin' && caller.userId !== userId) throw new AppError('FORBIDDEN');
    return caller;
  }
}
