// Messages for sockets that are not document events: a Server Script's `frappe.publish_realtime`. They reach this
// process's sockets at once and, with REDIS_URL, every other process's through the site's channel `<prefix>realtime`;
// without Redis, only this process's. Nothing is kept: a socket that is not connected then misses them, as in Frappe.
import { randomUUID } from 'node:crypto';
import { SitePlugin, type Site } from '../site';
import { RedisSubscription } from './redis-subscription';
import { publishNotice, siteRedis } from './site-redis';

/** One message: the socket.io event, its payload (JSON) and the room it goes to (`user:<name>`, `doc:…`, `all`). */
export interface RealtimeMessage {
  event: string;
  message: unknown;
  room: string;
}

type Listener = (message: RealtimeMessage) => void;

/** This process, so that it skips its own messages coming back from Redis (it delivered them at once). */
const PROCESS = randomUUID();

const CHANNEL = new SitePlugin<{ listeners: Set<Listener>; sub?: RedisSubscription }>(
  'realtime messages',
  () => ({ listeners: new Set() }),
  (state) => state.sub?.close(),
);

/** Hands every message published on the site to `listener` (a socket server); returns the unsubscribe. */
export function listenForRealtime(site: Site, listener: Listener): () => void {
  const state = CHANNEL.of(site);
  state.listeners.add(listener);
  const shared = siteRedis(site);
  if (shared && !state.sub)
    state.sub = new RedisSubscription(shared.redis, `${shared.prefix}realtime`, {
      message: (text) => {
        let parsed: { from?: unknown; message?: RealtimeMessage };
        try {
          parsed = JSON.parse(text) as typeof parsed;
        } catch {
          return;
        }
        if (parsed.from === PROCESS || !parsed.message) return;
        for (const each of state.listeners) each(parsed.message);
      },
    });
  return () => state.listeners.delete(listener);
}

/** Sends `message` to the room's sockets on this process and, with REDIS_URL, on every other. */
export async function publishRealtime(site: Site, message: RealtimeMessage): Promise<void> {
  for (const each of CHANNEL.of(site).listeners) each(message);
  const shared = siteRedis(site);
  if (shared)
    await publishNotice(shared, `${shared.prefix}realtime`, JSON.stringify({ from: PROCESS, message }));
}
