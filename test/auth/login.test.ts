// Password login: one answer for every failure (no enumeration), similar latency, hostile inputs refused.
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';
import { countRows, setSettings } from './auth-helpers';

let t: TestSite;
const USER = 'login-user@example.com';
const DISABLED = 'login-disabled@example.com';
const PASSWORD = 'login-password-1';
beforeAll(async () => {
  t = await createTestSite();
  await createUser(t, USER, ['System Manager'], PASSWORD);
  await createUser(t, DISABLED, ['System Manager'], PASSWORD);
  await t.http
    .put(`/api/resource/User/${DISABLED}`)
    .set('Authorization', t.adminToken)
    .send({ enabled: 0 })
    .expect(200);
  // Many failures from one address follow; the lockout has its own test file.
  await setSettings(t, { allow_consecutive_login_attempts: 1000 });
});
afterAll(() => t.close());

const post = (body: Record<string, unknown>, path = '/api/method/login') => t.http.post(path).send(body);

test.each(['/api/method/login', '/api/v2/method/login'])('%s logs in', async (path) => {
  const res = await post({ usr: USER, pwd: PASSWORD }, path);
  expect(res.status).toBe(200);
  expect(res.body.csrf_token).toEqual(expect.any(String));
});

test('a user is named by its email in lower case (Frappe): one user per address, signed in with any case', async () => {
  const created = await t.http
    .post('/api/resource/User')
    .set('Authorization', t.adminToken)
    .send({ email: ' Mixed.Case@Example.COM ', first_name: 'Mixed', new_password: PASSWORD });
  expect(created.status).toBe(201);
  expect(created.body.data).toMatchObject({
    name: 'mixed.case@example.com',
    email: 'mixed.case@example.com',
  });
  const again = await t.http
    .post('/api/v2/document/User')
    .set('Authorization', t.adminToken)
    .send({ email: 'MIXED.case@example.com', first_name: 'Twin' });
  expect(again.status).toBe(409);
  for (const usr of ['Mixed.Case@Example.COM', 'mixed.case@example.com'])
    expect((await post({ usr, pwd: PASSWORD })).status).toBe(200);
  expect((await post({ usr: 'MIXED.CASE@EXAMPLE.COM', pwd: 'wrong-password-1' })).status).toBe(401);
});

test('an unknown user, a wrong password and a disabled user get the identical answer', async () => {
  const answers = await Promise.all([
    post({ usr: 'no-such-user@example.com', pwd: PASSWORD }),
    post({ usr: USER, pwd: 'wrong-password' }),
    post({ usr: DISABLED, pwd: PASSWORD }),
  ]);
  for (const res of answers) {
    expect(res.status).toBe(401);
    expect(res.headers['set-cookie']).toBeUndefined();
  }
  const [a, b, c] = answers.map((r) => JSON.stringify(r.body));
  expect(b).toBe(a);
  expect(c).toBe(a);
  expect(answers[0]!.body.exc_type).toBe('AuthenticationError');
  // As Frappe's LoginManager.fail: the reason is also the body's `message` (what frappe-js-sdk shows).
  expect(answers[0]!.body.message).toBe('Invalid login credentials');
});

test('an unknown user takes about as long as a wrong password (a dummy hash is checked)', async () => {
  const time = async (usr: string) => {
    const started = process.hrtime.bigint();
    await post({ usr, pwd: 'wrong-password' });
    return Number(process.hrtime.bigint() - started);
  };
  const known: number[] = [];
  const unknown: number[] = [];
  // Interleaved, so load from other processes slows both series alike. Without the dummy hash an unknown user
  // would answer in well under a tenth of the time (no key derivation), so a factor of 3 still tells them apart.
  for (let i = 0; i < 9; i++) {
    known.push(await time(USER));
    unknown.push(await time('nobody-here@example.com'));
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1] as number;
  expect(median(unknown) / median(known)).toBeGreaterThan(1 / 3);
  expect(median(unknown) / median(known)).toBeLessThan(3);
});

test.each([
  ['no usr', { pwd: PASSWORD }],
  ['no pwd', { usr: USER }],
  ['usr as an object', { usr: { $ne: '' }, pwd: PASSWORD }],
  ['pwd as an array', { usr: USER, pwd: [PASSWORD] }],
  ['a 600-character password', { usr: USER, pwd: 'x'.repeat(600) }],
  ['a 200-character user', { usr: 'u'.repeat(200), pwd: PASSWORD }],
  ['SQL in usr', { usr: "' OR '1'='1", pwd: "' OR '1'='1" }],
])('%s → 401, no session created', async (_label, body) => {
  const before = await countRows(t, 'tabSessions');
  const res = await post(body);
  expect(res.status).toBe(401);
  expect(res.body.exc_type).toBe('AuthenticationError');
  expect(res.body.message).toEqual(expect.any(String));
  expect(await countRows(t, 'tabSessions')).toBe(before);
});

test('login is POST only', async () => {
  const res = await t.http.get('/api/method/login').query({ usr: USER, pwd: PASSWORD });
  expect(res.status).toBe(405);
});

test('login ignores the Authorization header', async () => {
  const res = await t.http
    .post('/api/method/login')
    .set('Authorization', 'token bad:bad')
    .send({ usr: USER, pwd: PASSWORD });
  expect(res.status).toBe(401);
});
