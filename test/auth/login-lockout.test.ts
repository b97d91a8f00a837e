// Login lockout: consecutive failures per user and per IP lock logins (429 + Retry-After); X-Forwarded-For from an
// untrusted peer cannot dodge it.
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';
import { setSettings } from './auth-helpers';

const PASSWORD = 'lockout-password-1';
// The site trusts the test client as a proxy, so each test can come from its own (forwarded) address and the
// per-IP streaks of one test do not lock the next.
let t: TestSite;
beforeAll(async () => {
  t = await createTestSite({ site: { trusted_proxies: ['127.0.0.1', '::1'] } });
});
afterAll(() => t.close());

let n = 0;
/** A fresh user, so tests do not share lock state. */
async function freshUser(): Promise<string> {
  const email = `lock-${++n}@example.com`;
  await createUser(t, email, ['System Manager'], PASSWORD);
  return email;
}
let ip = 0;
let currentIp = '';
beforeEach(() => {
  currentIp = `10.0.0.${++ip}`;
});
const attempt = (usr: string, pwd: string, xff = currentIp) =>
  t.http.post('/api/method/login').set('X-Forwarded-For', xff).send({ usr, pwd });

test('after allow_consecutive_login_attempts failures the account is locked: 429 with Retry-After, even with the right password', async () => {
  await setSettings(t, { allow_consecutive_login_attempts: 3, allow_login_after_fail: 60 });
  const usr = await freshUser();
  for (let i = 0; i < 3; i++) expect((await attempt(usr, 'wrong')).status).toBe(401);
  const locked = await attempt(usr, PASSWORD);
  expect(locked.status).toBe(429);
  expect(locked.body.exc_type).toBe('TooManyRequestsError');
  expect(Number(locked.headers['retry-after'])).toBeGreaterThan(0);
  expect(Number(locked.headers['retry-after'])).toBeLessThanOrEqual(60);
  expect(locked.headers['set-cookie']).toBeUndefined();
});

test('rotating X-Forwarded-For from an untrusted peer does not dodge the lock (XFF ignored)', async () => {
  const untrusted = await createTestSite();
  try {
    await setSettings(untrusted, { allow_consecutive_login_attempts: 3, allow_login_after_fail: 60 });
    await createUser(untrusted, 'rotator@example.com', ['System Manager'], PASSWORD);
    const send = (pwd: string, xff: string) =>
      untrusted.http
        .post('/api/method/login')
        .set('X-Forwarded-For', xff)
        .send({ usr: 'rotator@example.com', pwd });
    for (let i = 0; i < 3; i++) expect((await send('wrong', `198.51.100.${i}`)).status).toBe(401);
    expect((await send(PASSWORD, '203.0.113.77')).status).toBe(429);
  } finally {
    await untrusted.close();
  }
});

test('the user lock holds from every address', async () => {
  await setSettings(t, { allow_consecutive_login_attempts: 3, allow_login_after_fail: 60 });
  const usr = await freshUser();
  for (let i = 0; i < 3; i++) await attempt(usr, 'wrong', `10.1.0.${i}`);
  expect((await attempt(usr, PASSWORD, '10.1.0.200')).status).toBe(429);
});

test("a success before the limit clears the user's streak (the IP streak runs on)", async () => {
  await setSettings(t, { allow_consecutive_login_attempts: 3, allow_login_after_fail: 60 });
  const usr = await freshUser();
  // Each attempt from its own address, so only the user's streak is in play.
  const from = (i: number) => `10.3.${n}.${i}`;
  await attempt(usr, 'wrong', from(1));
  await attempt(usr, 'wrong', from(2));
  expect((await attempt(usr, PASSWORD, from(3))).status).toBe(200);
  await attempt(usr, 'wrong', from(4));
  await attempt(usr, 'wrong', from(5));
  expect((await attempt(usr, PASSWORD, from(6))).status).toBe(200);
});

test("a success does not clear the IP's streak", async () => {
  await setSettings(t, { allow_consecutive_login_attempts: 3, allow_login_after_fail: 60 });
  const usr = await freshUser();
  await attempt('someone-else@example.com', 'wrong');
  await attempt('someone-else@example.com', 'wrong');
  expect((await attempt(usr, PASSWORD)).status).toBe(200);
  await attempt('someone-else-2@example.com', 'wrong');
  expect((await attempt(usr, PASSWORD)).status).toBe(429);
});

test('an unknown user locks the same way (no enumeration through the lockout)', async () => {
  await setSettings(t, { allow_consecutive_login_attempts: 2, allow_login_after_fail: 60 });
  const statuses: number[] = [];
  for (let i = 0; i < 3; i++) statuses.push((await attempt('nobody-at-all@example.com', 'wrong')).status);
  expect(statuses).toEqual([401, 401, 429]);
});

test('the lock lifts after allow_login_after_fail seconds', async () => {
  await setSettings(t, { allow_consecutive_login_attempts: 2, allow_login_after_fail: 1 });
  const usr = await freshUser();
  await attempt(usr, 'wrong');
  await attempt(usr, 'wrong');
  expect((await attempt(usr, PASSWORD)).status).toBe(429);
  await new Promise((r) => setTimeout(r, 1_200));
  expect((await attempt(usr, PASSWORD)).status).toBe(200);
});

test('failures for many users from one IP lock that IP, not other addresses', async () => {
  await setSettings(t, { allow_consecutive_login_attempts: 3, allow_login_after_fail: 60 });
  const usr = await freshUser();
  for (let i = 0; i < 3; i++) expect((await attempt(`spray-${i}@example.com`, 'x')).status).toBe(401);
  const res = await attempt(usr, PASSWORD);
  expect(res.status).toBe(429);
  expect(res.headers['retry-after']).toBeDefined();
  expect((await attempt(usr, PASSWORD, '10.2.0.1')).status).toBe(200);
});

test('every spelling of the login path and any extra body field count against the same streak', async () => {
  await setSettings(t, { allow_consecutive_login_attempts: 4, allow_login_after_fail: 60 });
  const usr = await freshUser();
  const paths = ['/api/method/login', '/api/v2/method/login', '/api/method/login/', '/api/v1/method/login'];
  for (const [i, path] of paths.entries()) {
    const res = await t.http
      .post(path)
      .set('X-Forwarded-For', `10.4.0.${i}`)
      .send({ usr, pwd: 'wrong', email: `fresh-${i}@example.com` });
    expect([path, res.status]).toEqual([path, 401]);
  }
  expect((await attempt(usr, PASSWORD, '10.4.0.99')).status).toBe(429);
});
