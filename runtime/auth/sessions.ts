// Server-side sessions: rows of `tabSessions`, cached in memory, with idle expiry from System Settings.
import { randomBytes } from 'node:crypto';
import type { Queryable } from '../document/store';
import { SYSTEM_TABLES } from '../db/migrate';
import { now } from '../document/values';

/** What a session holds. */
export interface SessionData {
  sid: string;
  user: string;
  csrfToken: string;
  ip: string;
  /** Last use, ms since epoch. */
  lastUpdated: number;
}

const cache = new Map<string, SessionData>();
/** How often `lastupdate` is written back (Frappe: at most every 600 s). */
const TOUCH_MS = 60_000;

/** Parses System Settings `session_expiry` ("HH:MM" or "HH:MM:SS") into milliseconds; Frappe's default is 170 hours. */
export function parseSessionExpiry(value: unknown): number {
  const m = /^(\d+):(\d{1,2})(?::(\d{1,2}))?$/.exec(String(value ?? '').trim());
  if (!m) return 170 * 3600 * 1000;
  return ((Number(m[1]) * 60 + Number(m[2])) * 60 + Number(m[3] ?? 0)) * 1000;
}

/** Starts a session for `user`; with `denyMultiple`, the user's other sessions end. */
export async function createSession(q: Queryable, user: string, ip: string, denyMultiple: boolean): Promise<SessionData> {
  if (denyMultiple) await endUserSessions(q, user);
  const session: SessionData = { sid: randomBytes(28).toString('hex'), user, csrfToken: randomBytes(24).toString('hex'), ip, lastUpdated: Date.now() };
  await q(SYSTEM_TABLES.sessions).insert({
    sid: session.sid,
    user,
    sessiondata: JSON.stringify({ csrf_token: session.csrfToken }),
    ipaddress: ip,
    lastupdate: now(),
  });
  cache.set(session.sid, session);
  return session;
}

/** The live session of `sid`, or undefined when unknown or idle longer than `expiryMs` (then it is removed). */
export async function resumeSession(q: Queryable, sid: string, expiryMs: number): Promise<SessionData | undefined> {
  let session = cache.get(sid);
  if (!session) {
    const row = (await q(SYSTEM_TABLES.sessions).where('sid', sid).first()) as Record<string, unknown> | undefined;
    if (!row) return undefined;
    const data = JSON.parse(String(row.sessiondata)) as { csrf_token?: string };
    session = {
      sid,
      user: String(row.user),
      csrfToken: data.csrf_token ?? '',
      ip: String(row.ipaddress ?? ''),
      lastUpdated: Date.parse(`${String(row.lastupdate).replace(' ', 'T').slice(0, 23)}Z`),
    };
    cache.set(sid, session);
  }
  const idle = Date.now() - session.lastUpdated;
  if (idle > expiryMs) {
    await endSession(q, sid);
    return undefined;
  }
  if (idle > TOUCH_MS) {
    session.lastUpdated = Date.now();
    await q(SYSTEM_TABLES.sessions).where('sid', sid).update({ lastupdate: now() });
  }
  return session;
}

/** Ends one session. */
export async function endSession(q: Queryable, sid: string): Promise<void> {
  cache.delete(sid);
  await q(SYSTEM_TABLES.sessions).where('sid', sid).delete();
}

/** Ends every session of a user. */
export async function endUserSessions(q: Queryable, user: string): Promise<void> {
  for (const [sid, s] of cache) if (s.user === user) cache.delete(sid);
  await q(SYSTEM_TABLES.sessions).where('user', user).delete();
}
