// Saves that publish a change notice during a Redis outage: with a private redis-server stopped (the breaker open),
// saving a Server Script or a User answers without waiting on Redis (the notice goes through the breaker, not
// straight to ioredis, whose command timeout is 1 s), round after round past the breaker's one trial call a second.
import { checkRedisAtStart, siteRedis } from '../../runtime/redis/site-redis';
import { captureLog, type CapturedLog } from '../helpers/captured-log';
import { HAVE_REDIS, PrivateRedis } from '../helpers/private-redis';
import { DB_KIND, createTestSite, createUser, type TestSite } from '../helpers/test-site';

// A port per database, so the three runs can go at once.
const PORT = { sqlite: 4863, mysql: 4864, postgres: 4865 }[DB_KIND];
const USER = 'outage-notices@example.com';
const ROUNDS = 4;
/** The Redis command timeout of runtime/redis/site-redis.ts: how long a save that waits on a stopped Redis takes. */
const COMMAND_TIMEOUT_MS = 1000;
const run = HAVE_REDIS ? describe : describe.skip;
jest.setTimeout(60_000);

run('change notices during a Redis outage (private redis-server)', () => {
  const server = new PrivateRedis(PORT);
  let t: TestSite;
  let log: CapturedLog;

  beforeAll(async () => {
    log = captureLog();
    await server.start();
    t = await createTestSite({ redisUrl: server.url });
    expect(await checkRedisAtStart(t.site)).toBe(true);
    await createUser(t, USER, []);
    const saved = await t.http.post('/api/resource/Server Script').set('Authorization', t.adminToken).send({
      name: 'notices',
      script_type: 'API',
      api_method: 'notices',
      script: "frappe.response.message = 'v0'",
    });
    expect(saved.status).toBe(201);
  });
  afterAll(async () => {
    await t?.close();
    await server.stop();
    log?.restore();
  });

  const timed = async <T>(work: () => PromiseLike<T>): Promise<[T, number]> => {
    const started = Date.now();
    const result = await work();
    return [result, Date.now() - started];
  };
  const saveScript = (round: number) =>
    t.http
      .put('/api/resource/Server Script/notices')
      .set('Authorization', t.adminToken)
      .send({ script: `frappe.response.message = 'v${round}'` });
  const saveUser = (round: number) =>
    t.http
      .put(`/api/resource/User/${USER}`)
      .set('Authorization', t.adminToken)
      .send({ first_name: `round ${round}` });

  test('Redis stopped: Server Script and User saves answer without waiting on Redis; still after it is back', async () => {
    await server.stop();
    const end = Date.now() + 10_000;
    while (!siteRedis(t.site)?.breaker.isOpen && Date.now() < end)
      await new Promise((r) => setTimeout(r, 20));
    expect(siteRedis(t.site)?.breaker.isOpen).toBe(true);
    const took: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      for (const save of [saveScript, saveUser]) {
        const [res, ms] = await timed(() => save(round));
        expect(res.status).toBe(200);
        took.push(ms);
      }
      // Past the breaker's trial period: each round may meet a trial call.
      await new Promise((r) => setTimeout(r, 300));
    }
    // A save that waited on Redis takes the whole command timeout (1 s); one that did not takes a few ms. The
    // median is far below the timeout, and no save reaches it (a loaded machine slows some saves, not to 1 s).
    const sorted = [...took].sort((a, b) => a - b);
    expect(sorted[Math.floor(sorted.length / 2)]).toBeLessThan(500);
    expect(sorted[sorted.length - 1]).toBeLessThan(COMMAND_TIMEOUT_MS);
    const script = await t.http.get('/api/method/notices').set('Authorization', t.adminToken);
    expect(script.body.message).toBe(`v${ROUNDS}`);

    await server.start();
    const back = Date.now() + 15_000;
    while (siteRedis(t.site)?.breaker.isOpen && Date.now() < back)
      await new Promise((r) => setTimeout(r, 50));
    expect(siteRedis(t.site)?.breaker.isOpen).toBe(false);
    expect((await saveScript(ROUNDS + 1)).status).toBe(200);
    expect((await saveUser(ROUNDS + 1)).status).toBe(200);
  });
});
