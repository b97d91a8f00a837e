// The OAuth provider's endpoints as built-in methods, under Frappe's names (v1 /api/method/…, v2 /api/v2/method/…).
import type { AppContext } from '../http/state';

type Endpoints = typeof import('./oauth-endpoints');

/** A handler of oauth-endpoints.ts, loaded at its first call. */
function lazy(name: keyof Endpoints): (ctx: AppContext) => Promise<unknown> {
  return (ctx) => (require('./oauth-endpoints') as Endpoints)[name](ctx);
}

/**
 * One OAuth endpoint: verbs and handler; each answers its RFC's body itself (`raw`; a handler that returns undefined has
 * written the response: a page or a redirect), errors as OAuthError.
 */
export interface OAuthMethod {
  methods: readonly string[];
  handler: (ctx: AppContext) => Promise<unknown>;
  /** The Authorization header carries the client's credentials (client_secret_basic), not a user's. */
  clientAuth: boolean;
  /** False: a session needs no CSRF token (endpoints for clients, not browsers). The consent POST keeps the check. */
  csrf: boolean;
  /** OAuth scopes a bearer token calling it needs (default `all`). */
  scopes?: readonly string[];
}

/** The endpoints by method name. */
export const OAUTH_METHODS: ReadonlyMap<string, OAuthMethod> = new Map<string, OAuthMethod>([
  [
    'frappe.integrations.oauth2.authorize',
    { methods: ['GET', 'POST'], handler: lazy('authorize'), clientAuth: false, csrf: true },
  ],
  [
    'frappe.integrations.oauth2.get_token',
    { methods: ['POST'], handler: lazy('getToken'), clientAuth: true, csrf: false },
  ],
  [
    'frappe.integrations.oauth2.openid_profile',
    {
      methods: ['GET', 'POST'],
      handler: lazy('openidProfile'),
      clientAuth: false,
      csrf: false,
      scopes: ['openid'],
    },
  ],
  [
    'frappe.integrations.oauth2.revoke_token',
    { methods: ['POST'], handler: lazy('revokeToken'), clientAuth: true, csrf: false },
  ],
  [
    'frappe.integrations.oauth2.introspect_token',
    { methods: ['POST'], handler: lazy('introspectToken'), clientAuth: true, csrf: false },
  ],
]);
