// OAuth lifetimes from site config: access tokens, refresh tokens and authorization codes, in seconds.
import type { SiteConfig } from '../config/config';

/** Lifetimes the OAuth provider issues with. */
export interface OAuthLifetimes {
  accessToken: number;
  refreshToken: number;
  authorizationCode: number;
}

/** Site config `oauth_access_token_lifetime` (default 3600 s) and `oauth_refresh_token_lifetime` (default 30 days). */
export function oauthLifetimes(config: SiteConfig): OAuthLifetimes {
  const seconds = (value: unknown, fallback: number): number =>
    typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : fallback;
  return {
    accessToken: seconds(config.oauth_access_token_lifetime, 3600),
    refreshToken: seconds(config.oauth_refresh_token_lifetime, 30 * 24 * 3600),
    authorizationCode: 60,
  };
}
