// Users as authentication sees them (enabled, roles, names), cached per process and dropped when a User is written.
import type { Queryable } from '../db/row-store';
import { ADMINISTRATOR, type SessionUser } from '../site';
import { SingleFlight } from './single-flight';

/** What authentication needs to know of a user. */
export interface UserRecord extends SessionUser {
  enabled: boolean;
  fullName: string;
  userType: string;
  restrictIp?: string;
}

/**
 * True when `actor` may act as `user` (bind a credential to it): itself, and Administrator as anyone. A grant row whose
 * last writer may not act as its user grants nothing.
 */
export function mayActAs(actor: string, user: string): boolean {
  return actor === user || actor === ADMINISTRATOR;
}

const TTL_MS = 5_000;
const cache = new Map<string, { record: UserRecord | undefined; at: number }>();
/** User loads in flight: concurrent misses of one user (through one connection) share one read. */
const flights = new SingleFlight<UserRecord | undefined>();
/** Bumped by every forget: a load that began before it is used by its callers but not cached. */
let generation = 0;

/** Drops cached users (after a User or Has Role write). */
export function forgetUsers(): void {
  generation++;
  flights.forget();
  cache.clear();
}

/** The cache entry of `name` while it is fresh (its record is undefined for a user found not to exist). */
function freshEntry(name: string): { record: UserRecord | undefined } | undefined {
  const hit = cache.get(name);
  return hit && Date.now() - hit.at < TTL_MS ? hit : undefined;
}

/** The cached user, when it is cached and fresh (the synchronous fast path of authentication). */
export function cachedUser(name: string): UserRecord | undefined {
  return freshEntry(name)?.record;
}

/** Loads a user with its roles (plus `All` and `Guest` for every signed-in user); undefined when unknown. */
export async function loadUser(q: Queryable, name: string): Promise<UserRecord | undefined> {
  const hit = freshEntry(name);
  if (hit) return hit.record;
  return flights.run(q, name, () => readUser(q, name));
}

async function readUser(q: Queryable, name: string): Promise<UserRecord | undefined> {
  const readIn = generation;
  const row = (await q('tabUser')
    .where('name', name)
    .first('name', 'enabled', 'full_name', 'first_name', 'last_name', 'user_type', 'restrict_ip')) as
    Record<string, unknown> | undefined;
  let record: UserRecord | undefined;
  if (row) {
    const roles = (await q('tabHas Role').where({ parent: name, parenttype: 'User' }).select('role')) as {
      role: string;
    }[];
    const roleSet = new Set(['All', 'Guest', ...roles.map((r) => r.role)]);
    if (name === ADMINISTRATOR) roleSet.add('Administrator').add('System Manager');
    const fullName = String(
      row.full_name || [row.first_name, row.last_name].filter(Boolean).join(' ') || name,
    );
    record = {
      name,
      roles: roleSet,
      enabled: Number(row.enabled) === 1,
      fullName,
      userType: String(row.user_type ?? 'System User'),
      ...(row.restrict_ip ? { restrictIp: String(row.restrict_ip) } : {}),
    };
  }
  if (readIn === generation) cache.set(name, { record, at: Date.now() });
  return record;
}

/**
 * The stored name of the user `user` names: as given, else in lower case (users are named by their email in lower case,
 * Frappe's User.autoname, so `Ada@Example.com` names `ada@example.com`); undefined when neither is a user.
 */
export async function resolveUserName(q: Queryable, user: string): Promise<string | undefined> {
  for (const name of user === user.toLowerCase() ? [user] : [user, user.toLowerCase()])
    if (await q('tabUser').where('name', name).first('name')) return name;
  return undefined;
}
