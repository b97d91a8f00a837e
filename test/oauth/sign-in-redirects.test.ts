// The sign-in page never redirects off the site, whatever the spelling of redirect-to (dot segments, encoded dots,
// backslashes), and a password login posted from another site's page is refused (login CSRF) (issue #36 item 6).
import { cookieValue, login, type LoggedIn } from '../auth/auth-helpers';
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';

let t: TestSite;
let session: LoggedIn;
const USER = 'redirects@example.com';
const PASSWORD = 'redirect-password-1';

beforeAll(async () => {
  t = await createTestSite();
  await createUser(t, USER, [], PASSWORD);
  session = await login(t, USER, PASSWORD);
});
afterAll(() => t.close());

const HOSTILE = [
  '/.//evil.example',
  '/..//evil.example',
  '/%2e//evil.example',
  '/%2E%2E//evil.example',
  '/a/..//evil.example',
  '/a/b/../..//evil.example',
  '/a/%2e%2e//evil.example',
  '/./%2e//evil.example/x?y=1',
  '/.//evil.example\\',
  '/.\\/evil.example',
  '/\\/evil.example',
  '/..\\evil.example',
  '/.//\tevil.example',
];

/** True when a Location header keeps the browser on this site (a path, not protocol-relative). */
function staysOnSite(location: unknown): boolean {
  const where = String(location);
  return (
    where.startsWith('/') &&
    !where.startsWith('//') &&
    !where.includes('\\') &&
    new URL(where, 'http://svc.invalid').origin === 'http://svc.invalid'
  );
}

test.each(HOSTILE)(
  'redirect-to=%j never leaves the site (form, sign-in POST, signed-in GET)',
  async (target) => {
    const page = await t.http.get(`/login?redirect-to=${encodeURIComponent(target)}`);
    expect(page.status).toBe(200);
    expect(page.text).not.toContain('evil.example');
    const posted = await t.http
      .post('/login')
      .type('form')
      .send({ usr: USER, pwd: PASSWORD, 'redirect-to': target });
    if (posted.headers.location !== undefined) expect(staysOnSite(posted.headers.location)).toBe(true);
    else expect(posted.status).toBe(200);
    const signedIn = await t.http
      .get(`/login?redirect-to=${encodeURIComponent(target)}`)
      .set('Cookie', session.cookie);
    if (signedIn.headers.location !== undefined) expect(staysOnSite(signedIn.headers.location)).toBe(true);
    else expect(signedIn.status).toBe(200);
  },
);

test('paths of the site are still returned to, normalised', async () => {
  const res = await t.http
    .get(`/login?redirect-to=${encodeURIComponent('/a/../api/method/ping?x=1')}`)
    .set('Cookie', session.cookie);
  expect([res.status, res.headers.location]).toEqual([302, '/api/method/ping?x=1']);
});

describe('login CSRF', () => {
  const refused: [string, Record<string, string>][] = [
    ['another Origin', { Origin: 'https://evil.example' }],
    ['Origin null', { Origin: 'null' }],
    ['a look-alike Origin', { Origin: 'https://svc.example.evil.example', Host: 'svc.example' }],
    ['another Referer without Origin', { Referer: 'https://evil.example/page' }],
  ];

  test.each(refused)('%s: both sign-in paths answer 400 and start no session', async (_label, headers) => {
    const form = await t.http.post('/login').set(headers).type('form').send({ usr: USER, pwd: PASSWORD });
    expect(form.status).toBe(400);
    expect(cookieValue(form, 'sid')).toBeUndefined();
    const api = await t.http
      .post('/api/method/login')
      .set(headers)
      .type('form')
      .send({ usr: USER, pwd: PASSWORD });
    expect(api.status).toBe(400);
    expect(api.body.exc_type).toBe('CSRFTokenError');
    expect(cookieValue(api, 'sid')).toBeUndefined();
  });

  test('the same site (Origin or Referer of the Host), or no Origin and Referer at all, signs in', async () => {
    for (const headers of [
      { Host: 'svc.example', Origin: 'https://svc.example' },
      { Host: 'svc.example:8000', Referer: 'http://svc.example:8000/login?redirect-to=%2F' },
      {},
    ]) {
      const res = await t.http.post('/api/method/login').set(headers).send({ usr: USER, pwd: PASSWORD });
      expect(res.status).toBe(200);
      expect(cookieValue(res, 'sid')).toBeDefined();
    }
  });
});
