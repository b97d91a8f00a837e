// Credential changes across processes: with REDIS_URL, a revoked token, a changed user or a regenerated API key is
// dropped from every process's cache at once (without it, other processes notice within their 5 s cache).
import { ChangeBroadcast } from '../redis/change-broadcast';
import type { Site } from '../site';
import { forgetApiKeys } from './api-keys';
import { forgetBearerTokens } from './bearer-tokens';
import { forgetUsers } from './users';

/** Drops this process's cached bearer tokens, users and API keys (of User and of every custom key source). */
function forgetHere(): void {
  forgetBearerTokens();
  forgetUsers();
  forgetApiKeys();
}

const AUTH = new ChangeBroadcast('auth broadcast', 'auth-changed', forgetHere);

/** The site's subscription to other processes' notices (with REDIS_URL), closed when the site closes. */
export const AUTH_BROADCAST = AUTH.plugin;

/** Listens for other processes' notices (once per site; a no-op without REDIS_URL). Called when the site opens. */
export const listenForAuthChanges = (site: Site): void => AUTH.listen(site);

/**
 * Tells every process that tokens were revoked, a user changed or keys were regenerated (called after the commit that
 * did it): this one forgets at once, the others when the notice arrives.
 */
export const authChanged = (site: Site): Promise<void> => AUTH.changed(site);
