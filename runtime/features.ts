// The composition root of the document lifecycle: every feature registers its handlers into the site's extension
// points here, in this order (handlers of one point run in registration order; docs/lifecycle.md).
import { registerAuth } from './auth/auth-lifecycle';
import { registerFiles } from './files/file-lifecycle';
import { registerOAuth } from './oauth/oauth-lifecycle';
import { registerPermissions } from './permissions/permission-lifecycle';
import { registerServerScripts } from './scripts/script-lifecycle';
import type { Site } from './site';

/** Installs the features into a site that has just been opened. */
export function installFeatures(site: Site): void {
  const { lifecycle, registry } = site;
  registerPermissions(lifecycle);
  registerFiles(lifecycle, registry);
  registerServerScripts(lifecycle);
  registerAuth(lifecycle, registry);
  registerOAuth(lifecycle, registry);
}
