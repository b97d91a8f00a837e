// The probe routes: /api/health (the process answers: no database, no Redis) and /api/ready (the database answers a
// `select 1` within db_statement_timeout and Redis, when configured, a PING; 503 with Retry-After otherwise).
// The server listens only after its migrations ran, so a listening process has its schema.
import type { AppContext } from '../http/state';
import { siteRedis } from '../redis/site-redis';

const started = Date.now();

/** GET /api/health: 200 `{ status: "ok" }` while the process serves requests. */
export function health(ctx: AppContext): void {
  ctx.status = 200;
  ctx.body = { status: 'ok', uptime_s: Math.round((Date.now() - started) / 1000) };
}

/** Resolves true when Redis answers a PING within its command timeout (through the breaker). */
async function redisAnswers(ctx: AppContext): Promise<boolean | undefined> {
  const shared = siteRedis(ctx.state.site);
  if (!shared) return undefined;
  try {
    await shared.breaker.run(() => shared.redis.ping(), 'Redis');
    return true;
  } catch {
    return false;
  }
}

/** GET /api/ready: 200 when the database and Redis answer, else 503 naming what does not. */
export async function ready(ctx: AppContext): Promise<void> {
  const [database, redis] = await Promise.all([ctx.state.site.db.health.check(), redisAnswers(ctx)]);
  const ok = database && redis !== false;
  ctx.status = ok ? 200 : 503;
  if (!ok) ctx.set('Retry-After', '5');
  ctx.body = {
    status: ok ? 'ready' : 'unavailable',
    database: database ? 'up' : 'down',
    ...(redis === undefined ? {} : { redis: redis ? 'up' : 'down' }),
    migrations: 'done',
  };
}
