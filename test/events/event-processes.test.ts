// Events across real `svc serve` child processes on the test site's database: an SSE client resumes across a kill -9
// of its server with every event it missed and none twice; with REDIS_URL, a change committed on process A reaches a
// socket.io client of process B.
import Redis from 'ioredis';
import { io as connect, type Socket } from 'socket.io-client';
import { waitForPort } from '../helpers/private-mariadb';
import { createTestSite, type TestSite } from '../helpers/test-site';
import { startSvc, type SvcChild } from '../jobs/svc-child';
import { SseClient } from './sse-client';

jest.setTimeout(180_000);
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
// The MariaDB run takes other ports, so both runs may go at once.
const BASE_PORT = process.env.TEST_MYSQL_URL ? 4814 : 4810;
/** Commits on process A timed to a socket of process B. */
const SAMPLES = 10;

let t: TestSite;
const children: SvcChild[] = [];
const clients: { close(): void }[] = [];

beforeAll(async () => {
  t = await createTestSite();
});
afterAll(async () => {
  for (const c of clients) c.close();
  for (const child of children) {
    child.proc.kill('SIGKILL');
    await child.exited;
    child.cleanup();
  }
  await t.close();
});

async function serve(port: number, env: Record<string, string> = {}): Promise<SvcChild> {
  const child = startSvc(
    t,
    ['serve'],
    { job_worker: false },
    { PORT: String(port), HOST: '127.0.0.1', ...env },
  );
  children.push(child);
  await waitForPort(port, 90_000);
  return child;
}
async function create(port: number, description: string): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${port}/api/v2/document/ToDo`, {
    method: 'POST',
    headers: { Authorization: t.adminToken, 'Content-Type': 'application/json' },
    body: JSON.stringify({ description }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { data: { name: string } }).data.name;
}
const names = (c: SseClient) => c.of('list_update').map((m) => JSON.parse(m.data as string).name as string);

test('an SSE client resumes across a kill -9 of its server: every missed event, none twice', async () => {
  const port = BASE_PORT;
  const first = await serve(port);
  const c = await SseClient.open(port, '/api/v2/events?doctype=ToDo', { Authorization: t.adminToken });
  clients.push(c);
  await c.until((x) => x.comments > 0);
  const seen = [await create(port, 'before 1'), await create(port, 'before 2')];
  await c.until((x) => x.messages.length === 2);
  expect(names(c)).toEqual(seen);
  const last = c.messages[1]!.id as string;
  first.proc.kill('SIGKILL');
  await first.exited;
  await c.until((x) => x.ended);
  // Committed while no server runs (another process of the site writes).
  const missed: string[] = [];
  for (const d of ['while down 1', 'while down 2', 'while down 3']) {
    const res = await t.http
      .post('/api/v2/document/ToDo')
      .set('Authorization', t.adminToken)
      .send({ description: d });
    expect(res.status).toBe(201);
    missed.push(res.body.data.name);
  }
  await serve(port);
  const r = await SseClient.open(port, '/api/v2/events?doctype=ToDo', {
    Authorization: t.adminToken,
    'Last-Event-ID': last,
  });
  clients.push(r);
  await r.until((x) => x.messages.length === 3);
  const live = await create(port, 'after restart');
  await r.until((x) => x.messages.length === 4);
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(names(r)).toEqual([...missed, live]);
  const ids = r.messages.map((m) => Number(m.id));
  expect(new Set(ids).size).toBe(4);
  expect(ids[0]).toBeGreaterThan(Number(last));
});

test('with REDIS_URL, a change committed on process A reaches a socket of process B', async () => {
  const [a, b] = [BASE_PORT + 1, BASE_PORT + 2];
  await Promise.all([serve(a, { REDIS_URL }), serve(b, { REDIS_URL })]);
  const socket: Socket = connect(`http://127.0.0.1:${b}`, {
    transports: ['websocket'],
    extraHeaders: { Authorization: t.adminToken },
    reconnection: false,
  });
  clients.push({ close: () => socket.disconnect() });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('connect_error', reject);
  });
  const got: { name: string; at: number }[] = [];
  socket.on('list_update', (e: { name: string }) => got.push({ name: e.name, at: Date.now() }));
  expect(await socket.emitWithAck('doctype_subscribe', 'ToDo')).toEqual({ ok: true });
  // The notices on the site's channel, as another Redis client sees them.
  const watcher = new Redis(REDIS_URL);
  clients.push({ close: () => watcher.disconnect() });
  let notices = 0;
  watcher.on('pmessage', () => notices++);
  await watcher.psubscribe('svc:*:events');
  const made: string[] = [];
  const committed: number[] = [];
  // Ten commits about 250 ms apart span two periods of B's safety poll (a read at most every 1 to 1.25 s while Redis
  // is live), so the poll alone would deliver only about a third of them within 400 ms.
  for (let i = 0; i < SAMPLES; i++) {
    made.push(await create(a, `on A ${i}`));
    committed.push(Date.now());
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  for (const end = Date.now() + 10_000; got.length < SAMPLES && Date.now() < end;)
    await new Promise((resolve) => setTimeout(resolve, 20));
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(got.map((e) => e.name)).toEqual(made);
  expect(notices).toBeGreaterThanOrEqual(1);
  // Woken by the notice, not by the poll: at least 8 of the 10 arrive within 400 ms of their commit (the delay of a
  // local commit); a stall of the loaded machine may hold back one or two.
  const delays = got.map((e, i) => e.at - (committed[i] as number)).sort((x, y) => x - y);
  expect(delays[SAMPLES - 3]).toBeLessThan(400);
  // frappe.publish_realtime from a script run on A reaches the user's socket on B (the site's realtime channel).
  const saved = await fetch(`http://127.0.0.1:${a}/api/resource/Server Script`, {
    method: 'POST',
    headers: { Authorization: t.adminToken, 'Content-Type': 'application/json' },
    body: JSON.stringify({
      name: 'publish-across',
      script_type: 'API',
      api_method: 'publish_across',
      script: "frappe.publish_realtime('across', {from: 'A'}, {user: 'Administrator'})",
    }),
  });
  expect(saved.status).toBe(201);
  const across: unknown[] = [];
  socket.on('across', (payload: unknown) => across.push(payload));
  const called = await fetch(`http://127.0.0.1:${a}/api/method/publish_across`, {
    method: 'POST',
    headers: { Authorization: t.adminToken },
  });
  expect(called.status).toBe(200);
  for (const end = Date.now() + 10_000; across.length < 1 && Date.now() < end;)
    await new Promise((resolve) => setTimeout(resolve, 20));
  expect(across).toEqual([{ from: 'A' }]);
});

test('SIGTERM with an open SSE stream and socket: both are ended and the server exits well before shutdown_timeout', async () => {
  const port = BASE_PORT + 3;
  const child = await serve(port);
  const c = await SseClient.open(port, '/api/v2/events?doctype=ToDo', { Authorization: t.adminToken });
  clients.push(c);
  await c.until((x) => x.comments > 0);
  const socket: Socket = connect(`http://127.0.0.1:${port}`, {
    transports: ['websocket'],
    extraHeaders: { Authorization: t.adminToken },
    reconnection: false,
  });
  clients.push({ close: () => socket.disconnect() });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('connect_error', reject);
  });
  expect(await socket.emitWithAck('doctype_subscribe', 'ToDo')).toEqual({ ok: true });
  const disconnected = new Promise<void>((resolve) => socket.once('disconnect', () => resolve()));
  const started = Date.now();
  child.proc.kill('SIGTERM');
  const exit = await child.exited;
  await disconnected;
  await c.until((x) => x.ended);
  expect(exit.code).toBe(0);
  // shutdown_timeout is 10 s: the open stream and socket did not hold the server until then.
  expect(exit.at - started).toBeLessThan(5000);
});
