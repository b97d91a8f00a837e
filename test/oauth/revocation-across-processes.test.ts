// With REDIS_URL, a revoked token and a disabled user are refused at once by another process (a real child
// `svc serve` on the same database), not after its 5 s token cache: the change is published on Redis.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import request from 'supertest';
import { createApp } from '../../runtime/app';
import { closeSite, openSite } from '../../runtime/bootstrap';
import type { Site } from '../../runtime/site';
import { registry } from '../../generated';
import { waitForPort } from '../helpers/private-mariadb';
import { HAVE_REDIS, PrivateRedis } from '../helpers/private-redis';
import { DB_KIND, createTestSite, createUser, type TestSite } from '../helpers/test-site';
import { basic, registerClient, type RegisteredClient } from './oauth-helpers';

const ROOT = path.resolve(__dirname, '../..');
// Ports of their own (4740-4749), others for the MariaDB run so the two suites can run at once.
const PORT = DB_KIND === 'mysql' ? 4744 : 4743;
const REDIS_PORT = DB_KIND === 'mysql' ? 4746 : 4745;
const USER = 'frank@example.com';
/** Well under the 5 s the other process would otherwise keep believing its cache. */
const WITHIN_MS = 1500;
jest.setTimeout(120_000);

const suite = HAVE_REDIS ? describe : describe.skip;
let t: TestSite;
let redis: PrivateRedis;
let a: Site;
let httpA: ReturnType<typeof request>;
let child: ChildProcess | undefined;
let client: RegisteredClient;

suite('revocation across processes', () => {
  beforeAll(async () => {
    redis = new PrivateRedis(REDIS_PORT);
    await redis.start();
    t = await createTestSite();
    await createUser(t, USER, ['System Manager']);
    client = await registerClient(t, { grant_type: 'Client Credentials', user: USER, scopes: 'all' });
    a = await openSite({ ...t.site.config, redisUrl: redis.url }, registry);
    httpA = request(createApp(a, { onServerError: () => undefined }).callback());
    child = spawn(process.execPath, [path.join(ROOT, 'bin/svc.js'), 'serve'], {
      cwd: ROOT,
      env: {
        ...process.env,
        PORT: String(PORT),
        HOST: '127.0.0.1',
        DATABASE_URL: t.site.config.databaseUrl,
        REDIS_URL: redis.url,
        ADMIN_PASSWORD: 'admin-test-password',
        LOG_LEVEL: 'warn',
        JEST_WORKER_ID: '',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    await waitForPort(PORT, 60_000);
  });
  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child?.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    await closeSite(a);
    await t.close();
    await redis.stop();
  });

  async function issue(): Promise<string> {
    const res = await httpA
      .post('/api/method/frappe.integrations.oauth2.get_token')
      .type('form')
      .set('Authorization', basic(client.clientId, client.secret))
      .send({ grant_type: 'client_credentials' });
    expect(res.status).toBe(200);
    return res.body.access_token;
  }

  /** Asks process B as `token`: the status. */
  async function statusOnB(token: string): Promise<number> {
    const res = await fetch(`http://127.0.0.1:${PORT}/api/method/frappe.auth.get_logged_user`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    await res.arrayBuffer();
    return res.status;
  }

  /** Polls B until it refuses the token; the milliseconds that took (Infinity past the cache's 5 s). */
  async function refusedAfter(token: string, since: number): Promise<number> {
    while (Date.now() - since < 5000) {
      if ((await statusOnB(token)) === 401) return Date.now() - since;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    return Infinity;
  }

  test('a token revoked through process A is refused by process B at once', async () => {
    const token = await issue();
    expect(await statusOnB(token)).toBe(200); // B now holds it as valid in its cache
    const start = Date.now();
    const revoked = await httpA
      .post('/api/method/frappe.integrations.oauth2.revoke_token')
      .type('form')
      .set('Authorization', basic(client.clientId, client.secret))
      .send({ token });
    expect(revoked.status).toBe(200);
    expect(await refusedAfter(token, start)).toBeLessThan(WITHIN_MS);
  });

  test('a user disabled through process A: its tokens are revoked and refused by process B at once', async () => {
    const token = await issue();
    expect(await statusOnB(token)).toBe(200);
    const start = Date.now();
    const res = await httpA
      .put(`/api/resource/User/${USER}`)
      .set('Authorization', t.adminToken)
      .send({ enabled: 0 });
    expect(res.status).toBe(200);
    expect(await refusedAfter(token, start)).toBeLessThan(WITHIN_MS);
    // Revoked, not merely refused: enabling the user again does not bring the token back.
    await httpA.put(`/api/resource/User/${USER}`).set('Authorization', t.adminToken).send({ enabled: 1 });
    const row = await t.site.db.knex('tabOAuth Bearer Token').where('user', USER).where('status', 'Active');
    expect(row).toHaveLength(0);
    expect(await statusOnB(token)).toBe(401);
  });
});
