import { createSecretKey, type KeyObject } from 'node:crypto';
import type { AppConfig } from '../config/app-config';

/**
 * The HS256 key as a KeyObject, not a string: jsonwebtoken otherwise tries to parse the secret as a
 * public key on every verification, which was a fifth of the CPU time of a request. Signing
 * (@nestjs/jwt) and verifying (passport-jwt) share it.
 */
export function jwtSigningKey(config: AppConfig): KeyObject {
  return createSecretKey(Buffer.from(config.jwtSecret, 'utf8'));
}
