// What every open socket and event stream answers to besides its events: at most `max_realtime_connections_per_user`
// of them per user in a process (Guests counted per address), and its credentials, checked again every
// `realtime_recheck_ms` (a session logged out or expired, a token revoked, a key regenerated since ends it; a role removed
// or a user disabled is seen at the next event, event-access.ts).
import { AppError, TooManyRequestsError } from '../errors/errors';
import { SitePlugin, type SessionUser, type Site } from '../site';

/** Open connections per key, in this process. */
const OPEN = new SitePlugin<Map<string, number>>('realtime connections', () => new Map());

/** The key a connection is counted under: the user, or a Guest's address (Guests do not share one allowance). */
export function connectionKey(user: SessionUser, ip: string): string {
  return user.name === 'Guest' ? `Guest\u0000${ip}` : user.name;
}

/**
 * Counts a new connection under `key`; 429 TooManyRequestsError when the key has `max_realtime_connections_per_user`
 * open already. Returns the release, which is safe to call more than once.
 */
export function holdConnection(site: Site, key: string): () => void {
  const open = OPEN.of(site);
  const count = open.get(key) ?? 0;
  const max = site.config.site.max_realtime_connections_per_user;
  if (count >= max)
    throw new TooManyRequestsError(
      `At most ${max} sockets and event streams per user (max_realtime_connections_per_user): close one first`,
    );
  open.set(key, count + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const left = (open.get(key) ?? 1) - 1;
    if (left > 0) open.set(key, left);
    else open.delete(key);
  };
}

/**
 * Whether a connection stays after its credentials were checked again and that failed with `err`: only a refusal
 * (401, 403) ends it; an outage (a 503 of the database) does not, and the next check decides.
 */
export function stillHolds(err: unknown): boolean {
  return !(err instanceof AppError && (err.status === 401 || err.status === 403));
}
