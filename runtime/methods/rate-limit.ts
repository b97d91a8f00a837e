// Per-method rate limits (`rateLimit: { limit, seconds }`): one bucket per canonical method path and caller, counted in
// memory, or in Redis when REDIS_URL is set (rate-limiter-flexible; memory insures against Redis failures).
import { createHash } from 'node:crypto';
import Redis from 'ioredis';
import {
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible';
import { clientIp } from '../auth/client-ip';
import { TooManyRequestsError } from '../errors/errors';
import type { AppContext } from '../http/state';
import type { Site } from '../site';

/** A method's limit: at most `limit` calls per `seconds`. */
export interface RateLimit {
  limit: number;
  seconds: number;
}

interface SiteLimiters {
  redis?: Redis;
  /** Sites sharing one Redis keep their counters apart: the key space is per site database. */
  prefix: string;
  byBucket: Map<string, RateLimiterAbstract>;
}

const perSite = new WeakMap<Site, SiteLimiters>();

function limitersOf(site: Site): SiteLimiters {
  let entry = perSite.get(site);
  if (!entry) {
    entry = {
      byBucket: new Map(),
      prefix: `svc-rl:${createHash('sha256').update(site.config.databaseUrl).digest('hex').slice(0, 16)}:`,
    };
    if (site.config.redisUrl) {
      // Commands wait for the first connection (so the first calls count in Redis too); a Redis that stays away makes
      // them fail after one retry, and the in-memory insurance limiter counts instead.
      entry.redis = new Redis(site.config.redisUrl, { maxRetriesPerRequest: 1, connectTimeout: 2000 });
      entry.redis.on('error', () => undefined); // a failing Redis falls back to the in-memory insurance limiter
    }
    perSite.set(site, entry);
  }
  return entry;
}

function limiterFor(site: Site, path: string, limit: RateLimit): RateLimiterAbstract {
  const entry = limitersOf(site);
  const bucket = `${path}|${limit.limit}/${limit.seconds}`;
  let limiter = entry.byBucket.get(bucket);
  if (!limiter) {
    const options = { points: limit.limit, duration: limit.seconds, keyPrefix: `${entry.prefix}${bucket}` };
    const memory = new RateLimiterMemory(options);
    limiter = entry.redis
      ? new RateLimiterRedis({ ...options, storeClient: entry.redis, insuranceLimiter: memory })
      : memory;
    entry.byBucket.set(bucket, limiter);
  }
  return limiter;
}

/** Who a call counts against: the user, or the client IP for guests (X-Forwarded-For only from trusted proxies). */
export function rateLimitIdentity(ctx: AppContext): string {
  const { user } = ctx.state;
  return user.name === 'Guest' ? `ip:${clientIp(ctx)}` : `user:${user.name}`;
}

/** Counts one call of the method at canonical `path`; over the limit: 429 TooManyRequestsError with Retry-After. */
export async function consumeRateLimit(ctx: AppContext, path: string, limit: RateLimit): Promise<void> {
  try {
    await limiterFor(ctx.state.site, path, limit).consume(rateLimitIdentity(ctx));
  } catch (rejection) {
    if (!(rejection instanceof RateLimiterRes)) throw rejection;
    const retryAfter = Math.max(1, Math.ceil(rejection.msBeforeNext / 1000));
    throw new TooManyRequestsError(
      'You hit the rate limit because of too many requests. Please try after sometime.',
      {
        headers: { 'Retry-After': String(retryAfter) },
      },
    );
  }
}

/** Closes the site's rate-limit Redis connection, if any (tests and shutdown). */
export async function closeRateLimits(site: Site): Promise<void> {
  const entry = perSite.get(site);
  perSite.delete(site);
  if (entry?.redis) await entry.redis.quit().catch(() => undefined);
}
