import { applyDecorators } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { IsEmail, IsString, Length, MaxLength } from 'class-validator';

const trimmed = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);
const trimmedLowerCase = ({ value }: { value: unknown }) =>
  typeof value === 'string' ? value.trim().toLowerCase() : value;

/** An e-mail address as stored: trimmed and lower-cased, at most 254 characters. */
export const EmailField = () => applyDecorators(Transform(trimmedLowerCase), IsEmail(), MaxLength(254));

/** A person's display name: trimmed, 1 to 200 characters. */
export const PersonNameField = () => applyDecorators(Transform(trimmed), IsString(), Length(1, 200));

/** A new password: 8 to 128 characters (register, change-password, users created by an admin). */
export const NewPasswordField = () => applyDecorators(IsString(), Length(8, 128));
