import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiForbiddenResponse } from '@nestjs/swagger';
import { Authenticated } from '../common/auth/auth-decision.decorators';
import type { FormPermissionName } from './form-permission-names';

export const REQUIRED_FORM_PERMISSION = 'auth:form-permission';

/**
 * Only users holding the form-level permission on the configuration named by `:configId`. The
 * FormPermissionGuard enforces it before the body is read; the service behind the route checks the
 * same permission itself (`FormAccessService.require`).
 */
export const FormPermission = (permission: FormPermissionName) =>
  applyDecorators(
    Authenticated(),
    SetMetadata(REQUIRED_FORM_PERMISSION, permission),
    ApiForbiddenResponse({ description: `Requires form permission ${permission}` }),
  );
