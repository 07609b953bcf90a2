/**
 * The two ways every figure is measured (docs/design.md section 8): the service's defaults as a newcomer
 * runs it (cache off, info logging, no Redis), and the production settings (cache on, Redis). Only
 * the rate limits are lifted in both, so the load is measured instead of refused.
 */
export interface SettingsProfile {
  name: 'defaults' | 'production';
  env: Record<string, string>;
}

const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

export const PROFILES: SettingsProfile[] = [
  { name: 'defaults', env: {} },
  {
    name: 'production',
    env: {
      NODE_ENV: 'production',
      CACHE_ENABLED: 'true',
      REDIS_URL,
      REDIS_PREFIX: `bench${Date.now()}:`,
      LOG_LEVEL: 'warn',
      DATABASE_POOL_SIZE: '16',
      // Production serves /metrics on a port of its own (a boot rule of production): measured with it.
      METRICS_PORT: '3939',
    },
  },
];

/** `BENCH_PROFILES=defaults` (or `production`) measures one of them only. */
export function selectedProfiles(): SettingsProfile[] {
  const only = (process.env.BENCH_PROFILES ?? '').split(',').filter(Boolean);
  return only.length === 0 ? PROFILES : PROFILES.filter((profile) => only.includes(profile.name));
}
