// Open sockets and event streams answer to their credentials, not only to the user's rights: a session logged out or a
// key regenerated since ends them at the next check (`realtime_recheck_ms`); subscriptions are decided for the user as
// of now (roles removed since the handshake count); one user holds at most `max_realtime_connections_per_user` of them
// (429 beyond; Guests per client address, behind a trusted proxy the forwarded one); and closing a document a socket
// never opened tells its viewers nothing.
import type { Socket } from 'socket.io-client';
import { closeSessionStore } from '../../runtime/auth/sessions';
import { login } from '../auth/auth-helpers';
import { startRealtime, until, type RealtimeTestServer } from './realtime-server';
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';
import { SseClient } from './sse-client';

let t: TestSite;
let rt: RealtimeTestServer;
const streams: SseClient[] = [];

beforeAll(async () => {
  t = await createTestSite({ site: { realtime_recheck_ms: 100, max_realtime_connections_per_user: 3 } });
  rt = await startRealtime(t);
});
afterAll(async () => {
  for (const c of streams) c.close();
  await rt.close();
  await t.close();
});

const open = (headers: Record<string, string> = {}): Promise<Socket> => rt.open(headers);
const stream = async (headers: Record<string, string>) => {
  const c = await SseClient.open(rt.port, '/api/v2/events?doctype=ToDo', headers);
  streams.push(c);
  return c;
};
const emit = (socket: Socket, event: string, ...args: string[]): Promise<{ ok: boolean; error?: string }> =>
  new Promise((resolve) => socket.emit(event, ...args, resolve));

test('a logout ends the session’s open event stream and socket', async () => {
  await createUser(t, 'out@cred.test', ['System Manager'], 'out-password-1');
  const s = await login(t, 'out@cred.test', 'out-password-1');
  const sse = await stream({ Cookie: s.cookie });
  expect(sse.status).toBe(200);
  const socket = await open({ Cookie: s.cookie });
  expect(await emit(socket, 'doctype_subscribe', 'ToDo')).toEqual({ ok: true });
  // Still signed in: both stay open across several checks.
  await new Promise((r) => setTimeout(r, 400));
  expect(sse.ended).toBe(false);
  expect(socket.connected).toBe(true);
  const out = await t.http.post('/api/method/logout').set('Cookie', s.cookie).set('X-Svc-CSRF-Token', s.csrf);
  expect(out.status).toBe(200);
  await until(() => sse.ended && !socket.connected);
});

test('regenerated API keys end the sockets and streams opened with the old ones', async () => {
  const token = await createUser(t, 'keys@cred.test', ['System Manager']);
  const sse = await stream({ Authorization: token });
  const socket = await open({ Authorization: token });
  await new Promise((r) => setTimeout(r, 300));
  expect(sse.ended).toBe(false);
  const res = await t.http
    .post('/api/method/frappe.core.doctype.user.user.generate_keys')
    .set('Authorization', t.adminToken)
    .send({ user: 'keys@cred.test' });
  expect(res.status).toBe(200);
  await until(() => sse.ended && !socket.connected);
});

test('a subscription is decided for the user as of now, not as of the handshake', async () => {
  const token = await createUser(t, 'demoted@cred.test', ['System Manager']);
  const socket = await open({ Authorization: token });
  expect(await emit(socket, 'doctype_subscribe', 'Webhook')).toEqual({ ok: true });
  const res = await t.http
    .put('/api/resource/User/demoted@cred.test')
    .set('Authorization', t.adminToken)
    .send({ roles: [] });
  expect(res.status).toBe(200);
  expect(await emit(socket, 'doctype_subscribe', 'Webhook')).toEqual({ ok: false, error: 'Not permitted' });
  expect(await emit(socket, 'doc_subscribe', 'User', 'Administrator')).toEqual({
    ok: false,
    error: 'Not permitted',
  });
});

test('one user holds at most max_realtime_connections_per_user sockets and streams together', async () => {
  const token = await createUser(t, 'many@cred.test', ['System Manager']);
  const first = await stream({ Authorization: token });
  const second = await stream({ Authorization: token });
  const third = await open({ Authorization: token });
  const refused = await stream({ Authorization: token });
  expect(refused.status).toBe(429);
  expect(JSON.parse(refused.body).exc_type).toBe('TooManyRequestsError');
  await expect(open({ Authorization: token })).rejects.toMatchObject({
    data: { status: 429, exc_type: 'TooManyRequestsError' },
  });
  // Another user is not counted against this one.
  const other = await createUser(t, 'other@cred.test', ['System Manager']);
  expect((await stream({ Authorization: other })).status).toBe(200);
  // A closed one gives its place back (once the server has seen it close).
  first.close();
  third.disconnect();
  for (const end = Date.now() + 5_000; ;) {
    const again = await stream({ Authorization: token });
    if (again.status === 200) break;
    again.close();
    if (Date.now() > end) throw new Error('no place was given back');
    await new Promise((r) => setTimeout(r, 50));
  }
  expect(second.ended).toBe(false);
});

test('behind a trusted proxy, Guest sockets are counted per forwarded client address', async () => {
  const site = t.site.config.site;
  const trusted = site.trusted_proxies;
  site.trusted_proxies = ['127.0.0.1'];
  try {
    const from = (ip: string) => open({ 'X-Forwarded-For': ip });
    for (let i = 0; i < 3; i++) await from('203.0.113.7');
    await expect(from('203.0.113.7')).rejects.toMatchObject({ data: { status: 429 } });
    // Another client behind the same proxy has its own allowance.
    expect((await from('203.0.113.8')).connected).toBe(true);
  } finally {
    site.trusted_proxies = trusted;
  }
});

test('doc_close of a document the socket never opened sends its viewers nothing', async () => {
  const todo = await t.http
    .post('/api/v2/document/ToDo')
    .set('Authorization', t.adminToken)
    .send({ description: 'v' });
  const name = todo.body.data.name as string;
  const viewerToken = await createUser(t, 'viewer@cred.test', ['System Manager']);
  const admin = await open({ Authorization: t.adminToken });
  const viewer = await open({ Authorization: viewerToken });
  const seen: unknown[] = [];
  admin.on('doc_viewers', (payload: unknown) => seen.push(payload));
  expect(await emit(admin, 'doc_open', 'ToDo', name)).toEqual({ ok: true });
  expect(await emit(viewer, 'doc_open', 'ToDo', name)).toEqual({ ok: true });
  await until(() => seen.length === 1);
  const guest = await open();
  for (let i = 0; i < 5; i++) expect(await emit(guest, 'doc_close', 'ToDo', name)).toEqual({ ok: true });
  await new Promise((r) => setTimeout(r, 300));
  expect(seen).toHaveLength(1);
});

test('the checks of an open socket and stream do not keep an idle session alive', async () => {
  await createUser(t, 'idle@cred.test', ['System Manager'], 'idle-password-1');
  const s = await login(t, 'idle@cred.test', 'idle-password-1');
  const socket = await open({ Cookie: s.cookie });
  const sse = await stream({ Cookie: s.cookie });
  expect(sse.status).toBe(200);
  // The session was last used 90 s ago (past the minute after which a request writes its use back), and this
  // process forgets what it remembered of it: the next checks read the row.
  const before = new Date(Date.now() - 90_000).toISOString().replace('T', ' ').replace('Z', '');
  await t.site.db.knex('tabSessions').where('sid', s.sid).update({ lastupdate: before });
  await closeSessionStore(t.site);
  await new Promise((r) => setTimeout(r, 600));
  expect(socket.connected).toBe(true);
  expect(sse.ended).toBe(false);
  const row = (await t.site.db.knex('tabSessions').where('sid', s.sid).first('lastupdate')) as {
    lastupdate: string;
  };
  expect(String(row.lastupdate).slice(0, 19)).toBe(before.slice(0, 19));
});
