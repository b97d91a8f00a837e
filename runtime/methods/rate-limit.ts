// Per-method rate limits (`rateLimit: { limit, seconds }`): one bucket per canonical method path and caller, counted in
// memory, or in Redis when REDIS_URL is set (rate-limiter-flexible). While Redis is down (its breaker open, see
// redis/redis-breaker.ts) calls count in memory at once, and a failing Redis call falls back to memory too. The library
// (1 MB of heap) is loaded by the first call of a method that has a limit.
import { createHash } from 'node:crypto';
import type Redis from 'ioredis';
import type * as Flexible from 'rate-limiter-flexible';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import { clientIp } from '../auth/client-ip';
import { TooManyRequestsError } from '../errors/errors';
import type { AppContext } from '../http/state';
import type { RedisBreaker } from '../redis/redis-breaker';
import { siteRedis } from '../redis/site-redis';
import type { Site } from '../site';
import { SitePlugin } from '../site';

/** A method's limit: at most `limit` calls per `seconds`. */
export interface RateLimit {
  limit: number;
  seconds: number;
}

interface SiteLimiters {
  redis?: Redis;
  breaker?: RedisBreaker;
  /** Sites sharing one Redis keep their counters apart: the key space is per site database. */
  prefix: string;
  byBucket: Map<string, { shared?: RateLimiterAbstract; memory: RateLimiterAbstract }>;
}

/** The site's limiters (the Redis connection they use is the site's, closed with it). */
export const RATE_LIMITS = new SitePlugin<SiteLimiters>('rate limits', (site) => {
  const entry: SiteLimiters = {
    byBucket: new Map(),
    prefix: `svc-rl:${createHash('sha256').update(site.config.databaseUrl).digest('hex').slice(0, 16)}:`,
  };
  // The site's Redis connection (sessions share it): its breaker says when to count in memory without asking.
  const shared = siteRedis(site);
  if (shared) {
    entry.redis = shared.redis;
    entry.breaker = shared.breaker;
  }
  return entry;
});

/** rate-limiter-flexible, loaded when first needed. */
function flexible(): typeof Flexible {
  return require('rate-limiter-flexible') as typeof Flexible;
}

function limitersOf(site: Site): SiteLimiters {
  return RATE_LIMITS.of(site);
}

function limiterFor(site: Site, path: string, limit: RateLimit): RateLimiterAbstract {
  const entry = limitersOf(site);
  const bucket = `${path}|${limit.limit}/${limit.seconds}`;
  let limiters = entry.byBucket.get(bucket);
  if (!limiters) {
    const options = { points: limit.limit, duration: limit.seconds, keyPrefix: `${entry.prefix}${bucket}` };
    const { RateLimiterMemory, RateLimiterRedis } = flexible();
    const memory = new RateLimiterMemory(options);
    limiters = entry.redis
      ? {
          memory,
          shared: new RateLimiterRedis({
            ...options,
            storeClient: entry.redis,
            insuranceLimiter: memory,
          }),
        }
      : { memory };
    entry.byBucket.set(bucket, limiters);
  }
  return limiters.shared && !entry.breaker?.isOpen ? limiters.shared : limiters.memory;
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
    if (!(rejection instanceof flexible().RateLimiterRes)) throw rejection;
    const retryAfter = Math.max(1, Math.ceil(rejection.msBeforeNext / 1000));
    throw new TooManyRequestsError(
      'You hit the rate limit because of too many requests. Please try after sometime.',
      {
        headers: { 'Retry-After': String(retryAfter) },
      },
    );
  }
}

/** Forgets the site's limiters (tests); the Redis connection is the site's, closed with it. */
export function closeRateLimits(site: Site): Promise<void> {
  site.plugins.forget(RATE_LIMITS);
  return Promise.resolve();
}
