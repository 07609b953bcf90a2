import type { formConfigs } from '../../database/schema/form-configs.table';
import type { FormPermissionName } from '../../database/schema/form-permissions.table';

type FormConfigRow = typeof formConfigs.$inferSelect;
import type { Locale } from '../i18n/locale';

/** Who is calling, as the access guard established it from the bearer token. */
export interface AuthUser {
  userId: string;
  role: string;
  email: string;
  /** The site the user belongs to; null for global users (admins, users registered without a site). */
  siteId: string | null;
}

/** Passed first to every service call: who, for which tenant, in which language. */
export interface RequestContext {
  requestId: string;
  user: AuthUser | null;
  /** The site chosen by the Host header; null when the host matches no site. */
  siteId: string | null;
  locale: Locale;
  /** The caller's permissions on the route's configuration, when the route declares @FormPermission. */
  formPermissions?: ReadonlySet<FormPermissionName>;
  /** The route's configuration as the form-permission guard loaded it (active, visible), reused by services. */
  formConfig?: Readonly<FormConfigRow>;
}

declare module 'fastify' {
  interface FastifyRequest {
    user?: AuthUser;
    siteId?: string | null;
    locale?: Locale;
    formPermissions?: Set<FormPermissionName>;
    formConfig?: FormConfigRow;
  }
}
