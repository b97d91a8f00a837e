// Server-side sessions: rows of `tabSessions` with idle expiry, fronted by memory, or by Redis when REDIS_URL is set.
import { randomBytes } from 'node:crypto';
import type Redis from 'ioredis';
import { SYSTEM_TABLES } from '../db/migrate';
import { now } from '../db/stored-values';
import type { SessionData } from '../http/state';
import { closeSiteRedis, redisCall, siteRedis } from '../redis/site-redis';
import type { Site } from '../site';
import { SitePlugin } from '../site';

interface SessionStore {
  memory: Map<string, { session: SessionData; at: number }>;
  /** How long a memory entry is believed before it is read again (another process may have ended the session). */
  memoryTtl: number;
  redis?: Redis;
  prefix: string;
}

/** How often `lastupdate` is written back (Frappe: at most every 600 s). */
const TOUCH_MS = 60_000;
/** Memory entries are re-read after this long: from Redis (cheap, so often), else from the Sessions table. */
const SHARED_MEMORY_TTL_MS = 2_000;
const LOCAL_MEMORY_TTL_MS = 30_000;
const MAX_MEMORY_ENTRIES = 100_000;
/** Session ids are 28 random bytes in hex; anything else is unknown without a lookup. */
const SID = /^[0-9a-f]{56}$/;
/** The site's session store: the memory in front of Redis (or the Sessions table). */
const SESSION_STORES = new SitePlugin<SessionStore>('sessions', (site) => {
  const shared = siteRedis(site);
  const store: SessionStore = {
    memory: new Map(),
    memoryTtl: shared ? SHARED_MEMORY_TTL_MS : LOCAL_MEMORY_TTL_MS,
    prefix: `${shared?.prefix ?? ''}sid:`,
  };
  if (shared) store.redis = shared.redis;
  return store;
});

function storeOf(site: Site): SessionStore {
  return SESSION_STORES.of(site);
}

function remember(store: SessionStore, session: SessionData): void {
  if (store.memory.size >= MAX_MEMORY_ENTRIES)
    store.memory.delete(store.memory.keys().next().value as string);
  store.memory.set(session.sid, { session, at: Date.now() });
}

/**
 * What a session's key holds once the session ended. A request on another process may have read the session's row just
 * before it was deleted; writing the key back then would revive the session in Redis alone, for the whole expiry. The
 * mark makes that write fail, and a resume that finds it refuse the session without reading the row.
 */
const ENDED = 'ended';
/** How long the mark stays: far longer than a request that read the session before it ended takes to write it. */
const ENDED_MARK_MS = 10 * 60_000;
/** Sets KEYS[1] to ARGV[1] for ARGV[2] ms unless it holds the end mark (ARGV[3]); 1 when set. One atomic step. */
const SET_UNLESS_ENDED =
  "if redis.call('get', KEYS[1]) == ARGV[3] then return 0 end redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1";

/** Writes the session to Redis (when shared); false when it has ended meanwhile (its key holds the end mark). */
async function share(store: SessionStore, session: SessionData, expiryMs: number): Promise<boolean> {
  if (!store.redis) return true;
  const value = JSON.stringify({
    user: session.user,
    csrf_token: session.csrfToken,
    ip: session.ip,
    last: session.lastUpdated,
  });
  const ttl = Math.max(1, Math.min(expiryMs, 2 ** 31 - 1));
  const set = await redisCall(store.redis!, () =>
    store.redis!.eval(SET_UNLESS_ENDED, 1, store.prefix + session.sid, value, ttl, ENDED),
  );
  return Number(set) === 1;
}

/** Marks sessions ended in Redis (when shared), before their rows go. */
async function markEnded(store: SessionStore, sids: readonly string[]): Promise<void> {
  if (!store.redis || sids.length === 0) return;
  await redisCall(store.redis!, async () => {
    const marks = store.redis!.multi();
    for (const sid of sids) marks.set(store.prefix + sid, ENDED, 'PX', ENDED_MARK_MS);
    await marks.exec();
  });
}

/** Parses System Settings `session_expiry` ("HH:MM" or "HH:MM:SS") into milliseconds; Frappe's default is 170 hours. */
export function parseSessionExpiry(value: unknown): number {
  const m = /^(\d+):(\d{1,2})(?::(\d{1,2}))?$/.exec(String(value ?? '').trim());
  if (!m) return 170 * 3600 * 1000;
  return ((Number(m[1]) * 60 + Number(m[2])) * 60 + Number(m[3] ?? 0)) * 1000;
}

/** Starts a session for `user`; with `denyMultiple`, the user's other sessions end. */
export async function createSession(
  site: Site,
  user: string,
  ip: string,
  expiryMs: number,
  denyMultiple: boolean,
): Promise<SessionData> {
  if (denyMultiple) await endUserSessions(site, user);
  const store = storeOf(site);
  const session: SessionData = {
    sid: randomBytes(28).toString('hex'),
    user,
    csrfToken: randomBytes(24).toString('hex'),
    ip,
    lastUpdated: Date.now(),
  };
  // Redis first: when it is down the login fails (503) before any row is written. A new sid holds no end mark.
  await share(store, session, expiryMs);
  await site.db.knex(SYSTEM_TABLES.sessions).insert({
    sid: session.sid,
    user,
    sessiondata: JSON.stringify({ csrf_token: session.csrfToken }),
    ipaddress: ip.slice(0, 64),
    lastupdate: now(),
  });
  remember(store, session);
  return session;
}

/** The session as Redis holds it; ENDED when it ended, undefined when Redis does not know it. */
async function readShared(store: SessionStore, sid: string): Promise<SessionData | typeof ENDED | undefined> {
  const text = await redisCall(store.redis!, () => store.redis!.get(store.prefix + sid));
  if (!text) return undefined;
  if (text === ENDED) return ENDED;
  const data = JSON.parse(text) as { user: string; csrf_token: string; ip: string; last: number };
  return { sid, user: data.user, csrfToken: data.csrf_token, ip: data.ip, lastUpdated: data.last };
}

async function readRow(site: Site, sid: string): Promise<SessionData | undefined> {
  const row = (await site.db.knex(SYSTEM_TABLES.sessions).where('sid', sid).first()) as
    Record<string, unknown> | undefined;
  if (!row) return undefined;
  const data = JSON.parse(String(row.sessiondata)) as { csrf_token?: string };
  return {
    sid,
    user: String(row.user),
    csrfToken: data.csrf_token ?? '',
    ip: String(row.ipaddress ?? ''),
    lastUpdated: Date.parse(`${String(row.lastupdate).replace(' ', 'T').slice(0, 23)}Z`),
  };
}

/**
 * The live session of `sid`, or undefined when unknown or idle longer than `expiryMs` (then it is removed). `touch`
 * false reads it without counting as activity (an open connection's check): its idle time goes on.
 */
export async function resumeSession(
  site: Site,
  sid: string,
  expiryMs: number,
  touch = true,
): Promise<SessionData | undefined> {
  if (!SID.test(sid)) return undefined;
  const store = storeOf(site);
  const hit = store.memory.get(sid);
  let session = hit && Date.now() - hit.at < store.memoryTtl ? hit.session : undefined;
  if (!session) {
    const shared = store.redis ? await readShared(store, sid) : undefined;
    if (shared === ENDED) {
      store.memory.delete(sid);
      return undefined;
    }
    session = shared;
    if (!session) {
      session = await readRow(site, sid);
      if (!session || !(await share(store, session, expiryMs))) {
        store.memory.delete(sid);
        return undefined;
      }
    }
    remember(store, session);
  }
  const idle = Date.now() - session.lastUpdated;
  if (!(idle <= expiryMs)) {
    await endSession(site, sid);
    return undefined;
  }
  if (touch && idle > TOUCH_MS) {
    session.lastUpdated = Date.now();
    await site.db.knex(SYSTEM_TABLES.sessions).where('sid', sid).update({ lastupdate: now() });
    if (!(await share(store, session, expiryMs))) {
      store.memory.delete(sid);
      return undefined;
    }
  }
  return session;
}

/** Ends one session. */
export async function endSession(site: Site, sid: string): Promise<void> {
  const store = storeOf(site);
  store.memory.delete(sid);
  await markEnded(store, [sid]);
  await site.db.knex(SYSTEM_TABLES.sessions).where('sid', sid).delete();
}

/**
 * Ends every session of a user: those whose rows are there now, each marked ended and then deleted (a session a login
 * makes meanwhile stays, in Redis and in the table alike).
 */
export async function endUserSessions(site: Site, user: string): Promise<void> {
  const store = storeOf(site);
  for (const [sid, entry] of store.memory) if (entry.session.user === user) store.memory.delete(sid);
  const sids = (
    (await site.db.knex(SYSTEM_TABLES.sessions).where('user', user).select('sid')) as { sid: string }[]
  ).map((row) => row.sid);
  if (sids.length === 0) return;
  await markEnded(store, sids);
  await site.db.knex(SYSTEM_TABLES.sessions).whereIn('sid', sids).delete();
}

/** Closes the site's Redis connection, if any (tests and shutdown). */
export async function closeSessionStore(site: Site): Promise<void> {
  site.plugins.forget(SESSION_STORES);
  await closeSiteRedis(site);
}
