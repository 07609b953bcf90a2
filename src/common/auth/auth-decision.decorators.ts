import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiBearerAuth, ApiForbiddenResponse, ApiUnauthorizedResponse } from '@nestjs/swagger';

/**
 * Every route declares who may call it. A route without a decision is refused at run time and
 * fails the route-walk test, so forgetting one can never open a route by accident.
 */
export const AUTH_DECISION = 'auth:decision';
export const REQUIRED_ROLES = 'auth:roles';
export const REQUIRED_PERMISSION = 'auth:permission';

export type AuthDecision = 'public' | 'authenticated';

export interface RequiredPermission {
  resource: string;
  action: string;
}

const guarded = () =>
  applyDecorators(
    SetMetadata(AUTH_DECISION, 'authenticated' satisfies AuthDecision),
    ApiBearerAuth(),
    ApiUnauthorizedResponse({ description: 'Missing, invalid, expired or revoked token' }),
  );

/** Anyone may call the route, with or without a token. */
export const Public = () => SetMetadata(AUTH_DECISION, 'public' satisfies AuthDecision);

/** Any logged-in user may call the route; finer checks happen in the service. */
export const Authenticated = () => guarded();

/** Only users holding one of the roles (by name). */
export const Roles = (...roles: string[]) =>
  applyDecorators(
    guarded(),
    SetMetadata(REQUIRED_ROLES, roles),
    ApiForbiddenResponse({ description: `Requires role ${roles.join(' or ')}` }),
  );

/** Only users whose role's permission map grants `action` on `resource`. */
export const RequirePermission = (resource: string, action: string) =>
  applyDecorators(
    guarded(),
    SetMetadata(REQUIRED_PERMISSION, { resource, action } satisfies RequiredPermission),
    ApiForbiddenResponse({ description: `Requires permission ${resource}:${action}` }),
  );
