// The composition root of a site's features: their per-site state in teardown order (the reverse of installation),
// and their handlers in the document lifecycle's extension points (run in registration order; docs/lifecycle.md).
import { AUTH_BROADCAST } from './auth/auth-broadcast';
// Registers the Data Import job kind, so any process that opens a site (server or worker) can run imports.
import './data-import/import-job';
import { registerAuth } from './auth/auth-lifecycle';
import { USER_OWN_ROWS } from './auth/deleted-user';
import { registerBackLinks } from './back-links/back-links-lifecycle';
import { IMPORT_LOG_LINKS, registerDataImport } from './data-import/import-lifecycle';
import { EVENT_FEED } from './events/event-feed';
import { registerEvents } from './events/event-lifecycle';
import { SITE_REDIS } from './redis/site-redis';
import { registerFiles } from './files/file-lifecycle';
import { registerHistory } from './history/history-lifecycle';
import { RATE_LIMITS } from './methods/rate-limit';
import { REQUEST_LOG } from './middleware/request-log';
import { CLIENT_GRANT_LINKS } from './oauth/document-revocation';
import { registerOAuth } from './oauth/oauth-lifecycle';
import { registerPermissions } from './permissions/permission-lifecycle';
import { USER_PERMISSION_BROADCAST } from './permissions/user-permission-broadcast';
import { RESULT_CACHE } from './query/result-cache';
import { shrinkSandboxPool } from './scripts/sandbox-pool';
import { registerServerScripts } from './scripts/script-lifecycle';
import { SITE_SCRIPTS } from './scripts/script-store';
import type { Site } from './site';
import { DISPATCHER } from './webhooks/dispatcher';
import { registerWebhooks } from './webhooks/webhook-lifecycle';
import { WEBHOOK_NOTICES, WEBHOOKS } from './webhooks/webhook-index';

/**
 * Installs the features into a site that has just been opened (after its database's teardown, before its job
 * worker's). State a feature makes on first use without being listed here closes before all of these.
 */
export function installFeatures(site: Site): void {
  // Redis outlives everything that subscribes or counts through it.
  site.plugins.install(SITE_REDIS);
  // The event feed subscribes through Redis: it closes before it.
  site.plugins.install(EVENT_FEED);
  // Process-wide: idle sandbox workers go when a site closes (the next script run starts one again).
  site.plugins.onClose('sandbox pool', shrinkSandboxPool);
  site.plugins.install(
    RESULT_CACHE,
    AUTH_BROADCAST,
    USER_PERMISSION_BROADCAST,
    SITE_SCRIPTS,
    RATE_LIMITS,
    REQUEST_LOG,
    WEBHOOKS,
    WEBHOOK_NOTICES.plugin,
    DISPATCHER,
  );
  registerPermissions(site);
  registerFiles(site);
  // After files: a folder that still holds files is refused as such (Frappe's File.on_trash) before its links are.
  registerBackLinks(site, [...CLIENT_GRANT_LINKS, ...USER_OWN_ROWS, ...IMPORT_LOG_LINKS]);
  registerServerScripts(site);
  // Before auth: the webhook secret is sealed for signing before auth's beforeWrite would hash it.
  registerWebhooks(site);
  registerAuth(site);
  registerOAuth(site);
  registerHistory(site);
  registerEvents(site);
  registerDataImport(site);
}
