// User Permission changes across processes: with REDIS_URL, a User Permission written or deleted through one process
// drops every process's cached User Permissions at once (without it, other processes notice within their 5 s cache).
import { RedisSubscription } from '../redis/redis-subscription';
import { publishNotice, siteRedis } from '../redis/site-redis';
import type { Site } from '../site';
import { SitePlugin } from '../site';
import { forgetUserPermissions } from './user-permissions';

/** The site's subscription to other processes' notices (with REDIS_URL), closed when the site closes. */
export const USER_PERMISSION_BROADCAST = new SitePlugin<{ sub?: RedisSubscription }>(
  'user permission broadcast',
  () => ({}),
  (state) => state.sub?.close(),
);

function channelOf(prefix: string): string {
  return `${prefix}user-permissions-changed`;
}

/** Listens for other processes' notices (once per site; a no-op without REDIS_URL). Called when the site opens. */
export function listenForUserPermissionChanges(site: Site): void {
  const state = USER_PERMISSION_BROADCAST.of(site);
  if (state.sub) return;
  const shared = siteRedis(site);
  if (!shared) return;
  // Live again after an outage: a notice may have been missed, so this process forgets too.
  state.sub = new RedisSubscription(shared.redis, channelOf(shared.prefix), {
    message: forgetUserPermissions,
    live: forgetUserPermissions,
  });
}

/**
 * Tells every process that User Permissions changed (called after the commit that wrote them): this one forgets at
 * once, the others when the notice arrives. Redis being down costs only the notice (sent through the breaker).
 */
export async function userPermissionsChanged(site: Site): Promise<void> {
  forgetUserPermissions();
  const shared = siteRedis(site);
  if (shared) await publishNotice(shared, channelOf(shared.prefix), 'changed');
}
