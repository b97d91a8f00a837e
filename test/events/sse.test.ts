// GET /api/v2/events over a real socket: list_update / doc_update / doc_delete as the contract, a client cut off that
// resumes with Last-Event-ID (or last_event_id) gets every event it missed and none twice, an id older than the log
// gets `event: reset`, read permission is checked per event (as of that moment), and bad requests are refused.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SYSTEM_TABLES } from '../../runtime/db/migrate';
import { DocumentTransaction } from '../../runtime/document/lifecycle';
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';
import { SseClient } from './sse-client';

let t: TestSite;
let server: http.Server;
let port: number;
let u1: string;
let manager: string;
const open: SseClient[] = [];

beforeAll(async () => {
  t = await createTestSite();
  u1 = await createUser(t, 'u1@sse.test', []);
  manager = await createUser(t, 'manager@sse.test', ['System Manager']);
  server = http.createServer(t.app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  for (const c of open) c.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await t.close();
});

const stream = async (path: string, headers: Record<string, string>) => {
  const c = await SseClient.open(port, path, headers);
  open.push(c);
  return c;
};
const create = async (auth: string, description: string): Promise<string> => {
  const res = await t.http.post('/api/v2/document/ToDo').set('Authorization', auth).send({ description });
  expect(res.status).toBe(201);
  return res.body.data.name as string;
};
const names = (c: SseClient, event = 'list_update') =>
  c.of(event).map((m) => JSON.parse(m.data as string).name as string);
const ids = (c: SseClient) => c.messages.filter((m) => m.id !== undefined).map((m) => Number(m.id));

test('a stream of a DocType answers text/event-stream with id, event and data per committed change', async () => {
  const c = await stream('/api/v2/events?doctype=ToDo', { Authorization: t.adminToken });
  expect(c.status).toBe(200);
  expect(c.headers['content-type']).toMatch(/^text\/event-stream/);
  await c.until((x) => x.comments > 0);
  const name = await create(t.adminToken, 'first');
  await c.until((x) => x.messages.length === 1);
  const [m] = c.messages;
  expect(m!.event).toBe('list_update');
  expect(Number(m!.id)).toBeGreaterThan(0);
  const data = JSON.parse(m!.data as string);
  expect(Object.keys(data).sort()).toEqual(['doctype', 'modified', 'name', 'user']);
  expect(data).toMatchObject({ doctype: 'ToDo', name, user: 'Administrator' });
  c.close();
});

test('a client cut off resumes with Last-Event-ID: every missed event once, then live ones', async () => {
  const c = await stream('/api/v2/events?doctype=ToDo', { Authorization: t.adminToken });
  await c.until((x) => x.comments > 0);
  const before = [await create(t.adminToken, 'a1'), await create(t.adminToken, 'a2')];
  await c.until((x) => x.messages.length === 2);
  expect(names(c)).toEqual(before);
  const last = c.messages[1]!.id as string;
  c.close();
  const missed = [await create(t.adminToken, 'm1'), await create(t.adminToken, 'm2')];
  const r = await stream('/api/v2/events?doctype=ToDo', {
    Authorization: t.adminToken,
    'Last-Event-ID': last,
  });
  await r.until((x) => x.messages.length === 2);
  const live = await create(t.adminToken, 'live');
  await r.until((x) => x.messages.length === 3);
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(names(r)).toEqual([...missed, live]);
  const got = ids(r);
  expect(new Set(got).size).toBe(got.length);
  expect(got[0]).toBeGreaterThan(Number(last));
  // The same with the query parameter, while writes keep arriving.
  const writes = Promise.all([create(t.adminToken, 'w1'), create(t.adminToken, 'w2')]);
  const q = await stream(`/api/v2/events?doctype=ToDo&last_event_id=${last}`, {
    Authorization: t.adminToken,
  });
  const written = await writes;
  await q.until((x) => x.messages.length === 5);
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(names(q).slice(0, 3)).toEqual([...missed, live]);
  expect(names(q).slice(3).sort()).toEqual([...written].sort());
  expect(new Set(ids(q)).size).toBe(5);
});

test('a stream of one document: doc_update for its saves, doc_delete for its delete, nothing else', async () => {
  const name = await create(t.adminToken, 'watched');
  const other = await create(t.adminToken, 'other');
  const c = await stream(`/api/v2/events?doctype=ToDo&name=${name}`, { Authorization: t.adminToken });
  await c.until((x) => x.comments > 0);
  const path = (n: string) => `/api/v2/document/ToDo/${n}`;
  await t.http.put(path(other)).set('Authorization', t.adminToken).send({ description: 'x' });
  await t.http.put(path(name)).set('Authorization', t.adminToken).send({ description: 'changed' });
  await t.http.delete(path(name)).set('Authorization', t.adminToken);
  await c.until((x) => x.messages.length === 2);
  expect(c.messages.map((m) => [m.event, JSON.parse(m.data as string).name])).toEqual([
    ['doc_update', name],
    ['doc_delete', name],
  ]);
});

test('an id older than the retained log, or unknown to it, gets event: reset', async () => {
  await create(t.adminToken, 'keep');
  const first = (await t.site.db.knex(SYSTEM_TABLES.events).min({ id: 'id' }).first()) as { id: number };
  // As pruning leaves it: the two oldest events gone, so the client that saw only the first one missed the second.
  await t.site.db
    .knex(SYSTEM_TABLES.events)
    .where('id', '<=', Number(first.id) + 1)
    .delete();
  // 0 (nothing seen yet) too: the events it would have to replay are gone.
  for (const stale of [String(first.id), '999999999', '0']) {
    const c = await stream('/api/v2/events?doctype=ToDo', {
      Authorization: t.adminToken,
      'Last-Event-ID': stale,
    });
    await c.until((x) => x.messages.length === 1);
    expect(c.messages[0]!.event).toBe('reset');
    const name = await create(t.adminToken, `after reset ${stale}`);
    await c.until((x) => x.messages.length === 2);
    expect(names(c)).toEqual([name]);
  }
});

test('each event is checked against the reader: others’ documents are withheld, a lost role stops events', async () => {
  const mine = await stream('/api/v2/events?doctype=ToDo', { Authorization: u1 });
  const boss = await stream('/api/v2/events?doctype=ToDo', { Authorization: manager });
  await mine.until((x) => x.comments > 0);
  await boss.until((x) => x.comments > 0);
  const adminDoc = await create(t.adminToken, 'not for u1');
  const own = await create(u1, 'u1 own');
  await boss.until((x) => x.messages.length === 2);
  await mine.until((x) => x.messages.length === 1);
  expect(names(mine)).toEqual([own]);
  expect(names(boss)).toEqual([adminDoc, own]);
  // The manager loses System Manager: from now on only ToDos it owns (none) reach it.
  const res = await t.http
    .put('/api/v2/document/User/manager@sse.test')
    .set('Authorization', t.adminToken)
    .send({ roles: [] });
  expect(res.status).toBe(200);
  const hidden = await create(t.adminToken, 'after the role went');
  const marker = await create(u1, 'u1 marker');
  await mine.until((x) => x.messages.length === 2);
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(names(mine)).toEqual([own, marker]);
  expect(names(boss)).not.toContain(hidden);
  expect(names(boss)).not.toContain(marker);
});

test('refused requests answer JSON errors and open no stream', async () => {
  const cases: [string, Record<string, string>, number, string][] = [
    ['/api/v2/events', { Authorization: t.adminToken }, 400, 'DataError'],
    ['/api/v2/events?doctype=No%20Such', { Authorization: t.adminToken }, 404, 'DoesNotExistError'],
    ['/api/v2/events?doctype=Has%20Role', { Authorization: t.adminToken }, 400, 'ValidationError'],
    ['/api/v2/events?doctype=ToDo', {}, 401, 'AuthenticationError'],
    [
      '/api/v2/events?doctype=ToDo',
      { Authorization: t.adminToken, 'Last-Event-ID': '1 OR 1=1' },
      400,
      'DataError',
    ],
    ['/api/v2/events?doctype=ToDo&last_event_id=-1', { Authorization: t.adminToken }, 400, 'DataError'],
    ['/api/v2/events?doctype=ToDo&doctype=Note', { Authorization: t.adminToken }, 400, 'DataError'],
    ['/api/v2/events?doctype=ToDo&name=nope', { Authorization: t.adminToken }, 404, 'DoesNotExistError'],
    ['/api/v2/events?doctype=ToDo', { Authorization: 'token bad:worse' }, 401, 'AuthenticationError'],
    // A Guest is 401 whatever it asks (CONTRACT 6), so it learns no DocType names.
    ['/api/v2/events?doctype=No%20Such', {}, 401, 'AuthenticationError'],
    // Nor which DocTypes are child tables.
    ['/api/v2/events?doctype=Has%20Role', {}, 401, 'AuthenticationError'],
    // A Single has one document, named as the DocType.
    [
      '/api/v2/events?doctype=System%20Settings&name=foo',
      { Authorization: t.adminToken },
      404,
      'DoesNotExistError',
    ],
    [
      '/api/v2/events?doctype=ToDo&last_event_id=9007199254740992',
      { Authorization: t.adminToken },
      400,
      'DataError',
    ],
  ];
  const adminDoc = await create(t.adminToken, 'private');
  cases.push([`/api/v2/events?doctype=ToDo&name=${adminDoc}`, { Authorization: u1 }, 403, 'PermissionError']);
  for (const [path, headers, status, excType] of cases) {
    const c = await stream(path, headers);
    await c.until((x) => x.ended);
    expect([path, c.status]).toEqual([path, status]);
    expect(c.headers['content-type']).toMatch(/json/);
    expect(JSON.parse(c.body).exc_type ?? JSON.parse(c.body).errors?.[0]?.type).toBe(excType);
  }
});

test('a transaction still open when a later one commits: both arrive, in id order, once', async () => {
  const c = await stream('/api/v2/events?doctype=ToDo', { Authorization: t.adminToken });
  await c.until((x) => x.comments > 0);
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const tx = new DocumentTransaction(t.site, { name: 'Administrator', roles: new Set(['Administrator']) });
  let slowName = '';
  const slow = tx.run(async () => {
    const doc = tx.newDoc('ToDo', { description: 'slow' });
    await doc.insert();
    slowName = String(doc.name);
    await gate;
  });
  // The slow write has its event id; the next create takes a later one and commits first (MariaDB).
  while (!slowName) await new Promise((resolve) => setTimeout(resolve, 10));
  const fast = create(t.adminToken, 'fast');
  await new Promise((resolve) => setTimeout(resolve, 400));
  release();
  await slow;
  const fastName = await fast;
  await c.until((x) => x.messages.length === 2);
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(names(c)).toEqual([slowName, fastName]);
  expect(ids(c)[0]).toBeLessThan(ids(c)[1] as number);
});

test('a Single streams doc_update, never list_update; the largest safe id is an id', async () => {
  const c = await stream('/api/v2/events?doctype=System%20Settings', { Authorization: t.adminToken });
  const named = await stream('/api/v2/events?doctype=System%20Settings&name=System%20Settings', {
    Authorization: t.adminToken,
  });
  await c.until((x) => x.comments > 0);
  await named.until((x) => x.comments > 0);
  const res = await t.http
    .put('/api/v2/document/System Settings/System Settings')
    .set('Authorization', t.adminToken)
    .send({ log_api_requests: 0 });
  expect(res.status).toBe(200);
  await c.until((x) => x.messages.length === 1);
  await named.until((x) => x.messages.length === 1);
  expect(c.messages.map((m) => m.event)).toEqual(['doc_update']);
  expect(named.messages.map((m) => m.event)).toEqual(['doc_update']);
  const far = await stream('/api/v2/events?doctype=ToDo', {
    Authorization: t.adminToken,
    'Last-Event-ID': String(Number.MAX_SAFE_INTEGER),
  });
  await far.until((x) => x.messages.length === 1);
  expect(far.status).toBe(200);
  expect(far.messages[0]!.event).toBe('reset');
});

test('a resume from far back is replayed page by page: every event once, in order', async () => {
  const name = await create(t.adminToken, 'replayed');
  const head = Number((await t.site.db.knex(SYSTEM_TABLES.events).max({ id: 'id' }).first())!.id);
  // 1,250 updates of it: three pages of the replay (500 each).
  const rows = Array.from({ length: 1250 }, (_, i) => ({
    doctype: 'ToDo',
    docname: name,
    action: 'update',
    modified: `2026-11-30 10:00:${String(i % 60).padStart(2, '0')}.000000`,
    user: 'Administrator',
    owner: 'Administrator',
    created_at: Date.now(),
  }));
  for (let i = 0; i < rows.length; i += 250)
    await t.site.db.knex(SYSTEM_TABLES.events).insert(rows.slice(i, i + 250));
  const r = await stream(`/api/v2/events?doctype=ToDo&name=${name}`, {
    Authorization: t.adminToken,
    'Last-Event-ID': String(head),
  });
  await r.until((x) => x.messages.length === 1250, 20_000);
  const got = ids(r);
  expect(got).toEqual([...got].sort((a, b) => a - b));
  expect(new Set(got).size).toBe(1250);
  expect(got[0]).toBe(head + 1);
});
