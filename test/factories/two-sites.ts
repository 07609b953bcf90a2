import { createSite } from './site.factory';
import type { TestApp } from '../utils/test-app';

/** The Host headers of the two sites below, and of a host no site answers on. */
export const ON_A = { host: 'alpha.example.com' };
export const ON_B = { host: 'beta.example.com' };
export const ON_NO_SITE = { host: 'elsewhere.example.com' };

/**
 * The two sites the tenant-isolation suites work with, made through the admin API: Alpha
 * (alpha.example.com, reached with `ON_A`) and Beta (beta.example.com, `ON_B`). Returns their ids.
 */
export async function createTwoSites(
  t: TestApp,
  adminToken: string,
): Promise<{ siteA: string; siteB: string }> {
  const siteA = await createSite(t, adminToken, 'Alpha', ON_A.host);
  return { siteA, siteB: await createSite(t, adminToken, 'Beta', ON_B.host) };
}
