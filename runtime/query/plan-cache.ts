// Parsed and compiled list plans kept per site, keyed by everything that decides them: the DocType, the API version,
// the reader (name, roles, row restriction), the day (timespans) and the request's parameters. A hit skips parsing,
// metadata checks and knex compilation; results are always read fresh.
import { today } from '../db/stored-values';
import type { QueryAccess } from './reader-access';
import type { Caller } from '../document/caller';
import type { Site } from '../site';
import { SitePlugin } from '../site';

const MAX_ENTRIES = 500;
const MAX_KEY = 8192;
/** The site's plans by key (read by every list request). */
const PLANS = new SitePlugin<Map<string, unknown>>('list plans', () => new Map());

/** A role set's part of a key, made once per set (a session's roles are one set, used by each of its requests). */
const roleKeys = new WeakMap<ReadonlySet<string>, string>();
function roleKey(roles: ReadonlySet<string>): string {
  let key = roleKeys.get(roles);
  if (key === undefined) roleKeys.set(roles, (key = [...roles].sort().join(',')));
  return key;
}

/** The cache key of a plan, or undefined when the request is too large to key. */
export function planKey(
  kind: string,
  caller: Caller,
  doctype: string,
  access: QueryAccess,
  params: Record<string, unknown>,
): string | undefined {
  const { user } = caller;
  const restriction = access.restriction ? JSON.stringify(access.restriction) : '';
  const key = `${kind}\u0000${doctype}\u0000${caller.version}\u0000${user.name}\u0000${roleKey(user.roles)}\u0000${restriction}\u0000${today()}\u0000${JSON.stringify(params)}`;
  return key.length > MAX_KEY ? undefined : key;
}

/** The cached value for `key`, made by `make` on a miss (nothing is kept when `make` throws or `keep` says no). */
export async function cachedPlan<T>(
  site: Site,
  key: string | undefined,
  make: () => Promise<T>,
  keep: (value: T) => boolean = () => true,
): Promise<T> {
  if (key === undefined) return make();
  const cache = PLANS.of(site);
  const hit = cache.get(key) as T | undefined;
  if (hit !== undefined) return hit;
  const value = await make();
  if (keep(value)) {
    if (cache.size >= MAX_ENTRIES) cache.delete(cache.keys().next().value as string);
    cache.set(key, value);
  }
  return value;
}
