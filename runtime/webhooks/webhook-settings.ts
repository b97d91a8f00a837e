// The site config of webhooks: `webhook_retry_schedule` (seconds before each retry) and `webhook_allowed_hosts`.
import { ValidationError } from '../errors/errors';
import type { Site } from '../site';
import { allowedHosts, type AllowedHosts } from './address-policy';

/** Seconds before each retry of a failed delivery (Frappe v15 tries three times within seconds; these span a day). */
export const DEFAULT_RETRY_SCHEDULE: readonly number[] = [300, 1800, 7200, 18000, 36000, 36000];

/** The retry schedule of a site; a value that is not a list of non-negative numbers is refused. */
export function retrySchedule(site: Site): readonly number[] {
  const configured: unknown = site.config.site.webhook_retry_schedule;
  if (configured === undefined || configured === null) return DEFAULT_RETRY_SCHEDULE;
  if (
    !Array.isArray(configured) ||
    configured.length > 100 ||
    !configured.every((s) => typeof s === 'number' && Number.isFinite(s) && s >= 0)
  )
    throw new ValidationError(
      'site config webhook_retry_schedule must be a list of seconds (numbers, 0 or more)',
    );
  return configured as number[];
}

/** Parsed allowed-host lists, by the configured list (a site's config does not change while it is open). */
const parsed = new WeakMap<object, AllowedHosts>();
const NONE = allowedHosts([]);

/** The allowed hosts of a site (site config `webhook_allowed_hosts`: host names, addresses, CIDR ranges). */
export function siteAllowedHosts(site: Site): AllowedHosts {
  const configured: unknown = site.config.site.webhook_allowed_hosts;
  if (!Array.isArray(configured)) return NONE;
  let hosts = parsed.get(configured);
  if (!hosts) parsed.set(configured, (hosts = allowedHosts(configured)));
  return hosts;
}
