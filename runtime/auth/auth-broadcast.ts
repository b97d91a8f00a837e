// Credential changes across processes: with REDIS_URL, a revoked token, a changed user or a regenerated API key is
// dropped from every process's cache at once (without it, other processes notice within their 5 s cache).
import { RedisSubscription } from '../redis/redis-subscription';
import { publishNotice, siteRedis } from '../redis/site-redis';
import type { Site } from '../site';
import { SitePlugin } from '../site';
import { forgetApiKeys } from './api-keys';
import { forgetBearerTokens } from './bearer-tokens';
import { forgetUsers } from './users';

/** The site's subscription to other processes' notices (with REDIS_URL), closed when the site closes. */
export const AUTH_BROADCAST = new SitePlugin<{ sub?: RedisSubscription }>(
  'auth broadcast',
  () => ({}),
  (state) => state.sub?.close(),
);

function channelOf(prefix: string): string {
  return `${prefix}auth-changed`;
}

/** Drops this process's cached bearer tokens, users and API keys (of User and of every custom key source). */
function forgetHere(): void {
  forgetBearerTokens();
  forgetUsers();
  forgetApiKeys();
}

/** Listens for other processes' notices (once per site; a no-op without REDIS_URL). Called when the site opens. */
export function listenForAuthChanges(site: Site): void {
  const state = AUTH_BROADCAST.of(site);
  if (state.sub) return;
  const shared = siteRedis(site);
  if (!shared) return;
  // Live again after an outage: a notice may have been missed, so this process forgets too.
  state.sub = new RedisSubscription(shared.redis, channelOf(shared.prefix), {
    message: forgetHere,
    live: forgetHere,
  });
}

/**
 * Tells every process that tokens were revoked, a user changed or keys were regenerated (called after the commit that did it): this one
 * forgets at once, the others when the notice arrives. Redis being down costs only the notice (sent through the
 * breaker: no save waits on a Redis known to be down).
 */
export async function authChanged(site: Site): Promise<void> {
  forgetHere();
  const shared = siteRedis(site);
  if (shared) await publishNotice(shared, channelOf(shared.prefix), 'changed');
}
