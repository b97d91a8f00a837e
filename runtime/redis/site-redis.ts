// One Redis connection per site when REDIS_URL is set, with a key prefix of its own per site database, behind a
// circuit breaker: while Redis is down, calls fail at once with 503 (or take their fallback) instead of waiting.
import { createHash } from 'node:crypto';
import type Redis from 'ioredis';
import { logger } from '../log/logger';
import type { Site } from '../site';
import { SitePlugin } from '../site';
import { RedisBreaker } from './redis-breaker';

/** A site's Redis connection and the prefix of every key it writes (`svc:<hash of DATABASE_URL>:`). */
export interface SiteRedis {
  redis: Redis;
  prefix: string;
  breaker: RedisBreaker;
}

/** Longest one Redis command may take before it counts as a failure (a frozen Redis keeps its sockets open). */
const COMMAND_TIMEOUT_MS = 1000;
const CONNECT_TIMEOUT_MS = 2000;

const breakers = new WeakMap<Redis, RedisBreaker>();

/** Opens the connection of a site with REDIS_URL set. */
function connect(site: Site): SiteRedis {
  // ioredis is loaded only by a process that uses Redis (it costs several MB of memory).
  const RedisClient = require('ioredis') as typeof Redis;
  const redis = new RedisClient(site.config.redisUrl as string, {
    maxRetriesPerRequest: 1,
    commandTimeout: COMMAND_TIMEOUT_MS,
    connectTimeout: CONNECT_TIMEOUT_MS,
  });
  const breaker = new RedisBreaker('sessions, lockouts, rate limits', logger);
  breaker.watch(redis);
  breakers.set(redis, breaker);
  return {
    redis,
    breaker,
    prefix: `svc:${createHash('sha256').update(site.config.databaseUrl).digest('hex').slice(0, 16)}:`,
  };
}

/** Quits the connection; its own closing is not an outage. */
async function disconnect(entry: SiteRedis): Promise<void> {
  entry.redis.removeAllListeners('close');
  entry.redis.removeAllListeners('ready');
  await entry.redis.quit().catch(() => entry.redis.disconnect());
}

/** The site's Redis connection (sites with REDIS_URL only). */
export const SITE_REDIS = new SitePlugin<SiteRedis>('redis', connect, disconnect);

/** The site's Redis, or undefined without REDIS_URL. Processes serving the same database share the key space. */
export function siteRedis(site: Site): SiteRedis | undefined {
  return site.config.redisUrl ? SITE_REDIS.of(site) : undefined;
}

/** Runs a Redis command through the connection's breaker; a failure (or an open breaker) is 503 ServiceUnavailableError. */
export async function redisCall<T>(redis: Redis, call: () => Promise<T>): Promise<T> {
  const breaker = breakers.get(redis);
  if (!breaker) return call();
  return breaker.run(call, 'The shared session store (Redis)');
}

/**
 * Publishes a change notice through the breaker; never fails. While the breaker is open nobody waits for it (at most
 * it is the breaker's trial call): the subscribers missed it anyway, and read again when their subscription is live.
 */
export function publishNotice(entry: SiteRedis, channel: string, message: string): Promise<void> {
  const open = entry.breaker.isOpen;
  const sent = redisCall(entry.redis, () => entry.redis.publish(channel, message)).then(
    () => undefined,
    () => undefined,
  );
  return open ? Promise.resolve() : sent;
}

/**
 * At start-up: when REDIS_URL is set, checks that Redis answers within the connect timeout; if not, the breaker
 * opens and logs a warning (the service starts anyway and follows Redis as it comes and goes).
 */
export async function checkRedisAtStart(site: Site): Promise<boolean> {
  const entry = siteRedis(site);
  if (!entry) return true;
  try {
    await Promise.race([
      entry.redis.ping(),
      new Promise((_, reject) =>
        setTimeout(
          () => reject(new Error('no answer within the connect timeout')),
          CONNECT_TIMEOUT_MS,
        ).unref(),
      ),
    ]);
    return true;
  } catch (err) {
    entry.breaker.failed(`unreachable at start-up: ${(err as Error).message}`);
    return false;
  }
}

/** Closes the site's Redis connection, if any (tests and shutdown); its own closing is not an outage. */
export async function closeSiteRedis(site: Site): Promise<void> {
  const entry = SITE_REDIS.peek(site);
  site.plugins.forget(SITE_REDIS);
  if (entry) await disconnect(entry);
}
