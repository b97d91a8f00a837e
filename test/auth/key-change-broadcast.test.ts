// With REDIS_URL, a regenerated API key reaches every process at once (issue #36 item 11): a second, real server
// process (`node bin/svc.js serve` on the same database and Redis) refuses the old secret and takes the new one right
// after generate_keys answers on the first, instead of after its 5 s key cache expires.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import request from 'supertest';
import { waitForPort } from '../helpers/private-mariadb';
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';

const ROOT = path.resolve(__dirname, '../..');
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
// Another port for the MariaDB run, so the two suites can run at the same time.
const PORT = process.env.TEST_MYSQL_URL ? 4731 : 4730;
const USER = 'key-change@example.com';
jest.setTimeout(120_000);

let t: TestSite;
let other: ChildProcess;
let oldToken: string;
const b = request(`http://127.0.0.1:${PORT}`);

beforeAll(async () => {
  t = await createTestSite({ redisUrl: REDIS_URL });
  oldToken = await createUser(t, USER, []);
  other = spawn(process.execPath, [path.join(ROOT, 'bin/svc.js'), 'serve'], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(PORT),
      HOST: '127.0.0.1',
      DATABASE_URL: t.site.config.databaseUrl,
      REDIS_URL,
      ADMIN_PASSWORD: 'admin-test-password',
      LOG_LEVEL: 'warn',
      JEST_WORKER_ID: '',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  await waitForPort(PORT, 60_000);
});
afterAll(async () => {
  if (other.exitCode === null) {
    const exited = new Promise((resolve) => other.once('exit', resolve));
    other.kill('SIGTERM');
    await exited;
  }
  await t.close();
});

const whoAmI = (token: string) =>
  b.get('/api/method/frappe.auth.get_logged_user').set('Authorization', token);

/**
 * The status `token` gets on the other process, polled until it is `status` or 3 s (room for a loaded machine, and
 * still well before the other process's 5 s key cache, filled just before generate_keys, expires).
 */
async function settlesTo(token: string, status: number): Promise<number> {
  const deadline = Date.now() + 3000;
  let got = 0;
  while (Date.now() < deadline) {
    got = (await whoAmI(token)).status;
    if (got === status) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return got;
}

test('generate_keys on one process: the other refuses the old secret and takes the new one at once', async () => {
  // The other process has the key cached with the old secret verified.
  expect((await whoAmI(oldToken)).body.message).toBe(USER);
  expect((await whoAmI(oldToken)).status).toBe(200);
  const res = await t.http
    .post('/api/method/frappe.core.doctype.user.user.generate_keys')
    .set('Authorization', t.adminToken)
    .send({ user: USER });
  expect(res.status).toBe(200);
  const { api_key, api_secret } = res.body.message as { api_key: string; api_secret: string };
  expect(`token ${api_key}:`).toBe(oldToken.slice(0, oldToken.indexOf(':') + 1));
  expect(await settlesTo(oldToken, 401)).toBe(401);
  expect(await settlesTo(`token ${api_key}:${api_secret}`, 200)).toBe(200);
});
