import { applyDecorators } from '@nestjs/common';
import { IsString, Matches } from 'class-validator';

/** Role names are stable identifiers users refer to: lower-case, 2 to 50 characters. */
export const ROLE_NAME = /^[a-z][a-z0-9_-]{1,49}$/;

export const RoleNameField = () => applyDecorators(IsString(), Matches(ROLE_NAME));
