// With REDIS_URL, sessions live in Redis: two app processes (here: two sites on one database) share them.
import Redis from 'ioredis';
import request from 'supertest';
import { createApp } from '../../runtime/app';
import { closeSessionStore } from '../../runtime/auth/sessions';
import { openSite } from '../../runtime/bootstrap';
import type { Site } from '../../runtime/site';
import { DB_KIND, createTestSite, createUser, type TestSite } from '../helpers/test-site';
import { login, setSettings } from './auth-helpers';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const USER = 'shared-session@example.com';
const PASSWORD = 'shared-password-1';

let t: TestSite;
let siteA: Site;
let siteB: Site;
let a: ReturnType<typeof request>;
let b: ReturnType<typeof request>;
let redis: Redis;
const opened: Site[] = [];

async function open(redisUrl: string): Promise<Site> {
  const site = await openSite({ ...t.site.config, redisUrl }, t.site.registry);
  opened.push(site);
  return site;
}

beforeAll(async () => {
  t = await createTestSite();
  await createUser(t, USER, ['System Manager'], PASSWORD);
  siteA = await open(REDIS_URL);
  siteB = await open(REDIS_URL);
  a = request(createApp(siteA, { authHooks: [], onServerError: () => undefined }).callback());
  b = request(createApp(siteB, { authHooks: [], onServerError: () => undefined }).callback());
  redis = new Redis(REDIS_URL);
});
afterAll(async () => {
  for (const site of opened) {
    await closeSessionStore(site);
    await site.db.close();
  }
  await redis.quit();
  await t.close();
});

const whoAmI = (http: ReturnType<typeof request>, cookie: string) =>
  http.get('/api/method/frappe.auth.get_logged_user').set('Cookie', cookie);

test("a session started on one process is known to the other, and is kept in Redis under the site's prefix", async () => {
  const s = await login({ ...t, http: a }, USER, PASSWORD);
  const res = await whoAmI(b, s.cookie);
  expect(res.status).toBe(200);
  expect(res.body.message).toBe(USER);
  const keys = await redis.keys(`svc:*:sid:${s.sid}`);
  expect(keys).toHaveLength(1);
  expect(await redis.pttl(keys[0]!)).toBeGreaterThan(0);
});

test('a CSRF token from one process is valid on the other', async () => {
  const s = await login({ ...t, http: a }, USER, PASSWORD);
  const res = await b
    .post('/api/resource/ToDo')
    .set('Cookie', s.cookie)
    .set('X-Svc-CSRF-Token', s.csrf)
    .send({ description: 'shared' });
  expect(res.status).toBe(201);
});

test('logging out on one process ends the session on the other (within the short memory cache)', async () => {
  const s = await login({ ...t, http: a }, USER, PASSWORD);
  expect((await whoAmI(b, s.cookie)).status).toBe(200);
  expect(
    (await a.post('/api/method/logout').set('Cookie', s.cookie).set('X-Svc-CSRF-Token', s.csrf)).status,
  ).toBe(200);
  // The key holds the end mark until no request that read the session before it ended can write it back.
  const keys = await redis.keys(`svc:*:sid:${s.sid}`);
  expect(await redis.mget(...keys)).toEqual(['ended']);
  await new Promise((r) => setTimeout(r, 2_100));
  expect((await whoAmI(b, s.cookie)).status).toBe(401);
});

/**
 * Holds the Sessions row of `sid` in a write transaction of another connection (a slow DELETE stands in for it), runs
 * `end` on process A meanwhile, and asks process B for the session while A's end waits on the row: A marks the session
 * ended in Redis and then deletes its row, so the mark tells that A got that far (however slow a loaded machine is).
 */
async function endWhileHeld(sid: string, end: () => PromiseLike<{ status: number }>) {
  const db = t.site.db.knex;
  const held = await db.transaction();
  await held('tabSessions').where({ sid }).update({ ipaddress: 'held' });
  const ending = Promise.resolve(end());
  const [key] = await redis.keys(`svc:*:sid:${sid}`);
  for (const until = Date.now() + 10_000; (await redis.get(key as string)) !== 'ended';) {
    if (Date.now() > until) throw new Error('the session was not marked ended within 10 s');
    await new Promise((r) => setTimeout(r, 20));
  }
  return { ending, release: () => held.rollback() };
}

// On SQLite the hold is the database's write lock: a password change (a User save) waits for it before it starts ending
// sessions, so the session is rightly still live meanwhile; a logout marks it ended first and then waits.
test.each(DB_KIND === 'sqlite' ? ['logout'] : ['logout', 'password change'])(
  '%s on one process: a request on the other while the row is being deleted does not bring the session back',
  async (how) => {
    const usr = `resurrect-${how.replace(' ', '-')}@example.com`;
    await createUser(t, usr, ['System Manager'], PASSWORD);
    const s = await login({ ...t, http: a }, usr, PASSWORD);
    // B has not seen this session: its memory holds nothing, so it reads Redis and then the row.
    const { ending, release } = await endWhileHeld(s.sid, () =>
      how === 'logout'
        ? a.post('/api/method/logout').set('Cookie', s.cookie).set('X-Svc-CSRF-Token', s.csrf)
        : a
            .put(`/api/resource/User/${usr}`)
            .set('Authorization', t.adminToken)
            .send({ new_password: 'another-password-2' }),
    );
    const during = await whoAmI(b, s.cookie);
    await release();
    expect((await ending).status).toBe(200);
    expect(during.status).toBe(401);
    await new Promise((r) => setTimeout(r, 2_100));
    expect((await whoAmI(b, s.cookie)).status).toBe(401);
    expect((await whoAmI(a, s.cookie)).status).toBe(401);
    expect(await t.site.db.knex('tabSessions').where({ sid: s.sid })).toEqual([]);
  },
  20_000,
);

test('a session missing from Redis is read back from the Sessions table', async () => {
  const s = await login({ ...t, http: a }, USER, PASSWORD);
  await redis.del(...(await redis.keys(`svc:*:sid:${s.sid}`)));
  const fresh = request(
    createApp(await open(REDIS_URL), { authHooks: [], onServerError: () => undefined }).callback(),
  );
  expect((await whoAmI(fresh, s.cookie)).status).toBe(200);
  expect(await redis.keys(`svc:*:sid:${s.sid}`)).toHaveLength(1);
});

test('login lockout counters are shared: failures on one process lock the user on the other', async () => {
  await setSettings(t, { allow_consecutive_login_attempts: 3, allow_login_after_fail: 60 });
  const usr = 'locked-everywhere@example.com';
  await createUser(t, usr, ['System Manager'], PASSWORD);
  for (let i = 0; i < 3; i++)
    expect((await a.post('/api/method/login').send({ usr, pwd: 'wrong' })).status).toBe(401);
  const res = await b.post('/api/method/login').send({ usr, pwd: PASSWORD });
  expect(res.status).toBe(429);
  expect(Number(res.headers['retry-after'])).toBeGreaterThan(55);
  const locks = await redis.keys(`svc:*:login:lock:user:${usr}`);
  expect(locks).toHaveLength(1);
  // The client address was locked too; unlock it (this site's keys only) for the tests that follow.
  const prefix = locks[0]!.slice(0, locks[0]!.indexOf('login:'));
  await redis.del(...(await redis.keys(`${prefix}login:*`)));
  await setSettings(t, { allow_consecutive_login_attempts: 1000 });
});

test('an unreachable Redis answers 503, not 500, and logs nobody in', async () => {
  const broken = request(
    createApp(await open('redis://127.0.0.1:1'), {
      authHooks: [],
      onServerError: () => undefined,
    }).callback(),
  );
  const before = await t.site.db.knex('tabSessions').where('user', USER).count({ n: '*' }).first();
  const res = await broken.post('/api/method/login').send({ usr: USER, pwd: PASSWORD });
  expect(res.status).toBe(503);
  expect(await t.site.db.knex('tabSessions').where('user', USER).count({ n: '*' }).first()).toEqual(before);
  expect(res.body.exc_type).toBe('ServiceUnavailableError');
}, 20_000);
