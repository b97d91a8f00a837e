// System Settings as authentication reads them, cached briefly.
import { loadSingle } from '../db/document-rows';
import type { Site } from '../site';
import { SitePlugin } from '../site';
import { SingleFlight } from './single-flight';

const TTL_MS = 5_000;
/** The site's cached settings (`hit`), read on every request that logs or checks a session. */
const SETTINGS = new SitePlugin<{
  hit?: { values: Record<string, unknown>; at: number; generation: number };
}>('system settings', () => ({}));
/** Bumped by forgetSettings() without a site: every site's cached settings are stale. */
let generation = 0;
/** Bumped by every forget: a load that began before it is used by its callers but not cached. */
let forgets = 0;
/** Loads in flight, by site: when the cached settings expire, concurrent requests share one read. */
const flights = new SingleFlight<Record<string, unknown>>();

/** System Settings values (session expiry, lockout, request logging); empty when the DocType is not shipped. */
export async function loadSettings(site: Site): Promise<Record<string, unknown>> {
  const hit = SETTINGS.of(site).hit;
  if (hit && hit.generation === generation && Date.now() - hit.at < TTL_MS) return hit.values;
  return flights.run(site, '', async () => {
    const readIn = forgets;
    const binding = site.registry.get('System Settings');
    const values = binding ? await loadSingle(site.db.knex, binding) : {};
    if (readIn === forgets) SETTINGS.of(site).hit = { values, at: Date.now(), generation };
    return values;
  });
}

/** The cached settings when they are fresh, without waiting (hot paths check this before calling loadSettings). */
export function cachedSettings(site: Site): Record<string, unknown> | undefined {
  const hit = SETTINGS.of(site).hit;
  return hit && hit.generation === generation && Date.now() - hit.at < TTL_MS ? hit.values : undefined;
}

/** Drops the cached settings of a site, or of every site (after System Settings is saved). */
export function forgetSettings(site?: Site): void {
  forgets++;
  flights.forget();
  if (site) SETTINGS.of(site).hit = undefined;
  else generation++;
}
