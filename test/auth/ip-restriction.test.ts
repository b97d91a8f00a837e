// User restrict_ip (prefixes or CIDR) at login, on session requests and on API-key requests; X-Forwarded-For only
// from trusted proxies.
import type { Context } from 'koa';
import { clientIp, isHttps } from '../../runtime/auth/client-ip';
import { ipAllowed } from '../../runtime/auth/ip-restriction';
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';
import { login, setCookies } from './auth-helpers';

const PASSWORD = 'ip-password-1';

describe('ipAllowed', () => {
  test.each([
    [undefined, '1.2.3.4', true],
    ['', '1.2.3.4', true],
    ['10.1.0.0/16', '10.1.200.3', true],
    ['10.1.0.0/16', '10.2.0.1', false],
    ['192.168.', '192.168.7.7', true],
    ['192.168.', '10.192.168.1', false],
    ['1.2.3.4', '1.2.3.4', true],
    ['1.2.3.4', '1.2.3.40', false],
    ['10.0.0.0/8, 172.16.0.1', '172.16.0.1', true],
    ['10.0.0.0/8,\n172.16.0.1', '172.16.0.2', false],
    ['2001:db8::/32', '2001:db8::7', true],
    ['2001:db8::/32', '2001:db9::7', false],
    ['10.0.0.0/99', '10.0.0.1', false],
    ['garbage', '127.0.0.1', false],
  ])('restrict_ip %j, client %s → %s', (restriction, ip, allowed) => {
    expect(ipAllowed(restriction, ip)).toBe(allowed);
  });
});

describe('clientIp', () => {
  const ctx = (peer: string, xff: string | undefined, trusted: string[], proto?: string) =>
    ({
      state: { site: { config: { site: { trusted_proxies: trusted } } } },
      req: { socket: { remoteAddress: peer }, headers: xff === undefined ? {} : { 'x-forwarded-for': xff } },
      secure: false,
      get: (name: string) =>
        name === 'x-forwarded-for' ? (xff ?? '') : name === 'x-forwarded-proto' ? (proto ?? '') : '',
    }) as unknown as Context;

  test('without trusted proxies X-Forwarded-For is ignored', () => {
    expect(clientIp(ctx('::ffff:127.0.0.1', '9.9.9.9', []))).toBe('127.0.0.1');
  });
  test('from an untrusted peer X-Forwarded-For is ignored', () => {
    expect(clientIp(ctx('203.0.113.5', '9.9.9.9', ['10.0.0.0/8']))).toBe('203.0.113.5');
  });
  test('from a trusted proxy the right-most untrusted hop wins (a client cannot prepend its own)', () => {
    expect(clientIp(ctx('10.0.0.2', '6.6.6.6, 198.51.100.7, 10.0.0.9', ['10.0.0.0/8']))).toBe('198.51.100.7');
  });
  test('garbage hops are skipped', () => {
    expect(clientIp(ctx('10.0.0.2', "1.2.3.4, ' OR 1=1, not-an-ip", ['10.0.0.2']))).toBe('1.2.3.4');
  });
  test('X-Forwarded-Proto counts only from a trusted proxy', () => {
    expect(isHttps(ctx('10.0.0.2', undefined, ['10.0.0.2'], 'https'))).toBe(true);
    expect(isHttps(ctx('203.0.113.5', undefined, ['10.0.0.2'], 'https'))).toBe(false);
  });
});

describe('without trusted proxies', () => {
  let t: TestSite;
  let token: string;
  const USER = 'restricted@example.com';
  beforeAll(async () => {
    t = await createTestSite();
    token = await createUser(t, USER, ['System Manager'], PASSWORD);
  });
  afterAll(() => t.close());
  const restrict = (value: string) =>
    t.http
      .put(`/api/resource/User/${USER}`)
      .set('Authorization', t.adminToken)
      .send({ restrict_ip: value })
      .expect(200);

  test('a user restricted to other addresses cannot log in, even with a spoofed X-Forwarded-For', async () => {
    await restrict('10.1.0.0/16');
    for (const xff of [undefined, '10.1.2.3']) {
      const req = t.http.post('/api/method/login').send({ usr: USER, pwd: PASSWORD });
      const res = await (xff ? req.set('X-Forwarded-For', xff) : req);
      expect(res.status).toBe(401);
      expect(res.body.exc_type).toBe('AuthenticationError');
      expect(setCookies(res).some((c) => /^sid=[0-9a-f]/.test(c))).toBe(false);
    }
  });

  test('(d) from a refused address, the right and a wrong password get identical answers', async () => {
    await restrict('10.1.0.0/16');
    const answers = new Set<string>();
    for (const pwd of [PASSWORD, 'wrong-password-1']) {
      const res = await t.http.post('/api/method/login').send({ usr: USER, pwd });
      expect(res.status).toBe(401);
      answers.add(JSON.stringify(res.body));
    }
    expect(answers.size).toBe(1);
    await restrict('');
  });

  test('an API-key request from another address → 401', async () => {
    await restrict('10.1.0.0/16');
    const res = await t.http
      .get('/api/method/frappe.auth.get_logged_user')
      .set('Authorization', token)
      .set('X-Forwarded-For', '10.1.2.3');
    expect(res.status).toBe(401);
  });

  test('a session request after the restriction is set → 401', async () => {
    await restrict('');
    const s = await login(t, USER, PASSWORD);
    expect((await t.http.get('/api/method/frappe.auth.get_logged_user').set('Cookie', s.cookie)).status).toBe(
      200,
    );
    await restrict('10.1.0.0/16');
    expect((await t.http.get('/api/method/frappe.auth.get_logged_user').set('Cookie', s.cookie)).status).toBe(
      401,
    );
  });

  test('the local address allowed by prefix lets everything through', async () => {
    await restrict('127.0.');
    expect(
      (await t.http.get('/api/method/frappe.auth.get_logged_user').set('Authorization', token)).status,
    ).toBe(200);
    await login(t, USER, PASSWORD);
  });
});

describe('behind a trusted proxy', () => {
  let t: TestSite;
  let token: string;
  const USER = 'proxied@example.com';
  beforeAll(async () => {
    t = await createTestSite({ site: { trusted_proxies: ['127.0.0.1', '::1'] } });
    token = await createUser(t, USER, ['System Manager'], PASSWORD);
    await t.http
      .put(`/api/resource/User/${USER}`)
      .set('Authorization', t.adminToken)
      .send({ restrict_ip: '10.1.0.0/16' })
      .expect(200);
  });
  afterAll(() => t.close());

  test('login from an allowed forwarded address succeeds; from another it is refused', async () => {
    expect(
      (
        await t.http
          .post('/api/method/login')
          .set('X-Forwarded-For', '10.1.2.3')
          .send({ usr: USER, pwd: PASSWORD })
      ).status,
    ).toBe(200);
    expect(
      (
        await t.http
          .post('/api/method/login')
          .set('X-Forwarded-For', '10.9.2.3')
          .send({ usr: USER, pwd: PASSWORD })
      ).status,
    ).toBe(401);
  });

  test('every session request is checked against the forwarded address', async () => {
    const s = await login(t, USER, PASSWORD, { 'X-Forwarded-For': '10.1.2.3' });
    const get = (xff: string) =>
      t.http
        .get('/api/method/frappe.auth.get_logged_user')
        .set('Cookie', s.cookie)
        .set('X-Forwarded-For', xff);
    expect((await get('10.1.9.9')).status).toBe(200);
    expect((await get('192.168.1.1')).status).toBe(401);
  });

  test('API-key requests are checked against the forwarded address', async () => {
    const get = (xff: string) =>
      t.http
        .get('/api/method/frappe.auth.get_logged_user')
        .set('Authorization', token)
        .set('X-Forwarded-For', xff);
    expect((await get('10.1.0.1')).status).toBe(200);
    expect((await get('10.2.0.1')).status).toBe(401);
  });

  test('the sid cookie is Secure when the proxy says https', async () => {
    const res = await t.http
      .post('/api/method/login')
      .set('X-Forwarded-For', '10.1.2.3')
      .set('X-Forwarded-Proto', 'https')
      .send({ usr: USER, pwd: PASSWORD });
    expect(setCookies(res).find((c) => c.startsWith('sid='))).toMatch(/;\s*secure/i);
  });
});
