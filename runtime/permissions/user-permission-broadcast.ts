// User Permission changes across processes: with REDIS_URL, a User Permission written or deleted through one process
// drops every process's cached User Permissions at once (without it, other processes notice within their 5 s cache).
import { ChangeBroadcast } from '../redis/change-broadcast';
import type { Site } from '../site';
import { forgetUserPermissions } from './user-permissions';

const USER_PERMISSIONS = new ChangeBroadcast(
  'user permission broadcast',
  'user-permissions-changed',
  forgetUserPermissions,
);

/** The site's subscription to other processes' notices (with REDIS_URL), closed when the site closes. */
export const USER_PERMISSION_BROADCAST = USER_PERMISSIONS.plugin;

/** Listens for other processes' notices (once per site; a no-op without REDIS_URL). Called when the site opens. */
export const listenForUserPermissionChanges = (site: Site): void => USER_PERMISSIONS.listen(site);

/** Tells every process that User Permissions changed (called after the commit that wrote them). */
export const userPermissionsChanged = (site: Site): Promise<void> => USER_PERMISSIONS.changed(site);
