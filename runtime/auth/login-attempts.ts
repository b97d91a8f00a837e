// Login lockout: consecutive failed logins per user and per client IP (System Settings), refused with 429 while locked.
// Counters live in memory, or in Redis when REDIS_URL is set (then every process of the site sees the same locks).
import { TooManyRequestsError } from '../errors/errors';
import { redisCall, siteRedis } from '../redis/site-redis';
import type { Site } from '../site';
import { SitePlugin } from '../site';

/** The lockout settings: failures allowed in a row, and how long a lock lasts. */
export interface LockoutPolicy {
  maxAttempts: number;
  lockMs: number;
}

interface Counter {
  failures: number;
  lastFailure: number;
  lockedUntil: number;
}

const MAX_COUNTERS = 100_000;
/** The site's failed-login counters in this process (without REDIS_URL). */
const COUNTERS = new SitePlugin<Map<string, Counter>>('login attempts', () => new Map());

/** Reads System Settings `allow_consecutive_login_attempts` (default 10) and `allow_login_after_fail` (default 60 s). */
export function lockoutPolicy(settings: Record<string, unknown>): LockoutPolicy {
  const attempts = Number(settings.allow_consecutive_login_attempts);
  const seconds = Number(settings.allow_login_after_fail);
  return {
    maxAttempts: Number.isInteger(attempts) && attempts > 0 ? attempts : 10,
    lockMs: (Number.isFinite(seconds) && seconds > 0 ? seconds : 60) * 1000,
  };
}

function countersOf(site: Site): Map<string, Counter> {
  return COUNTERS.of(site);
}

/** The keys a login attempt counts against: the user name as typed (known or not) and the client IP. */
export function attemptKeys(user: string, ip: string): string[] {
  // Names longer than any valid one (140) all fail anyway; truncating keeps hostile input from growing the keys.
  return [`user:${user.trim().toLowerCase().slice(0, 141)}`, `ip:${ip}`];
}

function lockedError(ms: number): TooManyRequestsError {
  const seconds = Math.max(1, Math.ceil(ms / 1000));
  return new TooManyRequestsError(
    `Too many failed logins. Your account has been locked and will resume after ${seconds} seconds`,
    {
      headers: { 'Retry-After': String(seconds) },
    },
  );
}

/** Throws 429 TooManyRequestsError with Retry-After while any of the keys is locked. */
export async function assertNotLocked(site: Site, keys: readonly string[]): Promise<void> {
  const shared = siteRedis(site);
  let remaining = 0;
  if (shared) {
    const ttls = await redisCall(shared.redis, () =>
      Promise.all(keys.map((key) => shared.redis.pttl(`${shared.prefix}login:lock:${key}`))),
    );
    remaining = Math.max(0, ...ttls);
  } else {
    const map = countersOf(site);
    const nowMs = Date.now();
    for (const key of keys) remaining = Math.max(remaining, (map.get(key)?.lockedUntil ?? 0) - nowMs);
  }
  if (remaining > 0) throw lockedError(remaining);
}

/** A streak ends when its lock has run out, or (unlocked) when the last failure is older than one lock period. */
function streakOver(counter: Counter | undefined, nowMs: number, policy: LockoutPolicy): boolean {
  if (!counter) return true;
  if (counter.lockedUntil > 0) return counter.lockedUntil <= nowMs;
  return nowMs - counter.lastFailure > policy.lockMs;
}

/** Counts a failed login; a key reaching `maxAttempts` failures in a row is locked for `lockMs`. */
export async function recordFailure(
  site: Site,
  keys: readonly string[],
  policy: LockoutPolicy,
): Promise<void> {
  const shared = siteRedis(site);
  if (shared) {
    for (const key of keys) {
      const streak = `${shared.prefix}login:fail:${key}`;
      const [[, failures]] = (await redisCall(shared.redis, () =>
        shared.redis.multi().incr(streak).pexpire(streak, policy.lockMs).exec(),
      )) as [[unknown, number]];
      if (failures >= policy.maxAttempts) {
        await redisCall(shared.redis, () =>
          shared.redis
            .multi()
            .set(`${shared.prefix}login:lock:${key}`, '1', 'PX', policy.lockMs)
            .del(streak)
            .exec(),
        );
      }
    }
    return;
  }
  const map = countersOf(site);
  const nowMs = Date.now();
  for (const key of keys) {
    let counter = map.get(key);
    if (!counter || streakOver(counter, nowMs, policy)) {
      if (!counter && map.size >= MAX_COUNTERS) map.delete(map.keys().next().value as string);
      counter = { failures: 0, lastFailure: nowMs, lockedUntil: 0 };
      map.set(key, counter);
    }
    counter.failures++;
    counter.lastFailure = nowMs;
    if (counter.failures >= policy.maxAttempts) counter.lockedUntil = nowMs + policy.lockMs;
  }
}

/** A successful login clears the user's streak (the IP's streak runs out on its own, so one account cannot reset it). */
export async function recordSuccess(site: Site, userKey: string): Promise<void> {
  const shared = siteRedis(site);
  if (shared) await redisCall(shared.redis, () => shared.redis.del(`${shared.prefix}login:fail:${userKey}`));
  else countersOf(site).delete(userKey);
}
