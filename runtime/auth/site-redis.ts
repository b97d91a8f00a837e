// One Redis connection per site when REDIS_URL is set, with a key prefix of its own per site database.
import { createHash } from 'node:crypto';
import Redis from 'ioredis';
import { ServiceUnavailableError } from '../errors/errors';
import type { Site } from '../site';

/** A site's Redis connection and the prefix of every key it writes (`svc:<hash of DATABASE_URL>:`). */
export interface SiteRedis {
  redis: Redis;
  prefix: string;
}

const connections = new WeakMap<Site, SiteRedis>();

/** The site's Redis, or undefined without REDIS_URL. Processes serving the same database share the key space. */
export function siteRedis(site: Site): SiteRedis | undefined {
  const url = site.config.redisUrl;
  if (!url) return undefined;
  let entry = connections.get(site);
  if (!entry) {
    const redis = new Redis(url, { maxRetriesPerRequest: 1 });
    redis.on('error', () => undefined); // failures surface on the commands, as 503
    entry = {
      redis,
      prefix: `svc:${createHash('sha256').update(site.config.databaseUrl).digest('hex').slice(0, 16)}:`,
    };
    connections.set(site, entry);
  }
  return entry;
}

/** Runs a Redis command; a failure becomes 503 ServiceUnavailableError. */
export async function redisCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw new ServiceUnavailableError('The shared session store is unavailable', { cause: err });
  }
}

/** Closes the site's Redis connection, if any (tests and shutdown). */
export async function closeSiteRedis(site: Site): Promise<void> {
  const entry = connections.get(site);
  connections.delete(site);
  if (entry) await entry.redis.quit().catch(() => entry.redis.disconnect());
}
