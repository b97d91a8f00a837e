// Redis outages with a real server: a private redis-server is stopped, then frozen (SIGSTOP), under load. Cookie
// requests and logins fail fast with 503 and Retry-After (the breaker: no request waits on a dead Redis), API-key
// requests are untouched, rate-limited methods count in memory (the README's fallback), each change of state logs
// one line, and everything works again once Redis is back, without a restart. A Redis unreachable from the start is
// a warning at start-up, and rate-limited calls do not wait on it.
import { checkRedisAtStart, siteRedis } from '../../runtime/redis/site-redis';
import { captureLog, type CapturedLog } from '../helpers/captured-log';
import { fixtureRegistry } from '../helpers/fixture-registry';
import { HAVE_REDIS, PrivateRedis } from '../helpers/private-redis';
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';
import { login, type LoggedIn } from '../auth/auth-helpers';

// Another port for the MariaDB run, so the two suites can run at the same time.
const PORT = process.env.TEST_MYSQL_URL ? 4182 : 4172;
/** The Redis command timeout of runtime/redis/site-redis.ts: how long a request that waits on a frozen Redis takes. */
const COMMAND_TIMEOUT_MS = 1000;
const run = HAVE_REDIS ? describe : describe.skip;
jest.setTimeout(60_000);

run('Redis outage (private redis-server)', () => {
  const server = new PrivateRedis(PORT);
  let t: TestSite;
  let token: string;
  let session: LoggedIn;
  const USER = 'redis-outage@example.com';
  const PASSWORD = 'redis-outage-1';
  let log: CapturedLog;

  beforeAll(async () => {
    log = captureLog();
    await server.start();
    t = await createTestSite({ registry: await fixtureRegistry() });
    t.site.config.redisUrl = server.url;
    expect(await checkRedisAtStart(t.site)).toBe(true);
    token = await createUser(t, USER, ['System Manager'], PASSWORD);
    session = await login(t, USER, PASSWORD);
  });

  afterAll(async () => {
    server.thaw();
    await t?.close();
    await server.stop();
    log?.restore();
  });

  const whoAmI = (cookie: string) =>
    t.http.get('/api/method/frappe.auth.get_logged_user').set('Cookie', cookie);
  const timed = async <T>(work: () => PromiseLike<T>): Promise<[T, number]> => {
    const started = Date.now();
    const result = await work();
    return [result, Date.now() - started];
  };
  const events = () => log.lines.map((l) => l.event).filter((e) => String(e).startsWith('redis_'));
  /** Waits past the memory cache of sessions (2 s with Redis), so requests go to Redis. */
  const pastSessionCache = () => new Promise((r) => setTimeout(r, 2100));

  async function outage(): Promise<void> {
    // Cookie requests under load: 503 with Retry-After, fast (at most one trial call waits for the command timeout).
    const answers = await Promise.all(Array.from({ length: 20 }, () => timed(() => whoAmI(session.cookie))));
    for (const [res, ms] of answers) {
      expect(res.status).toBe(503);
      expect(res.body.exc_type).toBe('ServiceUnavailableError');
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      expect(ms).toBeLessThan(1500);
    }
    const [loginRes, loginMs] = await timed(() =>
      t.http.post('/api/method/login').send({ usr: USER, pwd: PASSWORD }),
    );
    expect(loginRes.status).toBe(503);
    expect(loginMs).toBeLessThan(1500);
    // API keys do not need Redis: a keyed request takes a few ms, one that waited on Redis would take the whole
    // command timeout. Of five requests the median is far below it, and none reaches it (a loaded machine slows
    // some requests, not to 1 s).
    const keyedMs: number[] = [];
    for (let i = 0; i < 5; i++) {
      const [keyed, ms] = await timed(() =>
        t.http.get('/api/method/frappe.auth.get_logged_user').set('Authorization', token),
      );
      expect(keyed.status).toBe(200);
      keyedMs.push(ms);
    }
    keyedMs.sort((a, b) => a - b);
    expect(keyedMs[2]).toBeLessThan(500);
    expect(keyedMs[4]).toBeLessThan(COMMAND_TIMEOUT_MS);
    // Rate-limited methods count in memory.
    const [limited, limitedMs] = await timed(() =>
      t.http.get('/api/v2/method/Widget/limited').set('Authorization', token),
    );
    expect([200, 429]).toContain(limited.status);
    expect(limitedMs).toBeLessThan(1500);
  }

  async function untilBack(ms = 15_000): Promise<void> {
    const started = Date.now();
    for (;;) {
      const res = await whoAmI(session.cookie);
      if (res.status === 200) return;
      expect(res.status).toBe(503);
      if (Date.now() - started > ms) throw new Error(`Redis sessions not back after ${ms} ms`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  test('healthy: the session works through Redis', async () => {
    expect(siteRedis(t.site)?.breaker.isOpen).toBe(false);
    expect((await whoAmI(session.cookie)).body.message).toBe(USER);
  });

  test('Redis stopped: fast 503s, fallbacks, one line; back after a restart', async () => {
    log.lines.length = 0;
    await server.stop();
    await pastSessionCache();
    await outage();
    expect(events()).toEqual(['redis_unavailable']);
    const ready = await t.http.get('/api/ready');
    expect([ready.status, ready.body.redis, ready.body.database]).toEqual([503, 'down', 'up']);
    expect((await t.http.get('/api/health')).status).toBe(200);
    await server.start();
    await untilBack();
    // Redis lost its keys with its restart; the session is read back from the database.
    expect((await whoAmI(session.cookie)).body.message).toBe(USER);
    expect(events()).toEqual(['redis_unavailable', 'redis_available']);
  });

  test('Redis frozen (SIGSTOP): fast 503s, fallbacks, one line; back after SIGCONT', async () => {
    log.lines.length = 0;
    await pastSessionCache();
    server.freeze();
    try {
      await outage();
      expect(events()).toEqual(['redis_unavailable']);
    } finally {
      server.thaw();
    }
    await untilBack();
    expect(events()).toEqual(['redis_unavailable', 'redis_available']);
  });

  test('Redis unreachable from the start: a warning at start-up; rate-limited calls do not wait on it', async () => {
    const other = await createTestSite({ registry: await fixtureRegistry() });
    try {
      other.site.config.redisUrl = 'redis://127.0.0.1:4173';
      log.lines.length = 0;
      expect(await checkRedisAtStart(other.site)).toBe(false);
      expect(log.lines.find((l) => l.event === 'redis_unavailable')).toMatchObject({ level: 40 });
      for (let i = 0; i < 3; i++) {
        const [res, ms] = await timed(() =>
          other.http.get('/api/v2/method/Widget/limited').set('Authorization', other.adminToken),
        );
        expect([200, 429]).toContain(res.status);
        expect(ms).toBeLessThan(1500);
      }
    } finally {
      await other.close();
    }
  });
});
