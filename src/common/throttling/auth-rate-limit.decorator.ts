import { SetMetadata } from '@nestjs/common';

export const AUTH_RATE_LIMITED = 'throttle:auth';

/** Counts the route against the stricter authentication limit (THROTTLE_AUTH_LIMIT) as well. */
export const AuthRateLimit = () => SetMetadata(AUTH_RATE_LIMITED, true);
