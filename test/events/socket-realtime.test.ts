// Frappe's realtime wire over socket.io 4 with real socket.io-client connections: handshake authentication (token,
// Basic, sid cookie, Guest; bad credentials refused), namespaces `/` and `/<site_name>`, doc_update / list_update with
// read permission checked at subscribe and for every event, doc_viewers, task_progress / task_complete of a bulk job
// and of a Data Import.
import { io as connect, type Socket } from 'socket.io-client';
import { collect, startRealtime, until as waitUntil, type RealtimeTestServer } from './realtime-server';
import { callImportMethod, newImport, uploadFile } from '../data-io/import-helpers';
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';
import { saveScript } from '../scripts/script-helpers';

let t: TestSite;
let rt: RealtimeTestServer;
let base: string;
let u1: string;
let u2: string;
let manager: string;
const sockets: Socket[] = [];

beforeAll(async () => {
  t = await createTestSite({
    site: { bulk_operation_async_threshold: { ToDo: 3, '*': 20 }, job_poll_ms: 50 },
  });
  u1 = await createUser(t, 'u1@rt.test', [], 'u1-password-1');
  u2 = await createUser(t, 'u2@rt.test', []);
  manager = await createUser(t, 'manager@rt.test', ['System Manager']);
  rt = await startRealtime(t);
  base = `http://127.0.0.1:${rt.port}`;
});
afterAll(async () => {
  for (const s of sockets) s.disconnect();
  await rt.close();
  await t.close();
});

const open = (headers: Record<string, string> = {}, namespace = '/') => rt.open(headers, namespace);
const auth = (token: string) => ({ Authorization: token });
const until = (ready: () => boolean, ms = 10_000) => waitUntil(ready, ms);
const settle = () => new Promise((r) => setTimeout(r, 400));
const create = async (token: string, description: string): Promise<string> => {
  const res = await t.http.post('/api/v2/document/ToDo').set('Authorization', token).send({ description });
  expect(res.status).toBe(201);
  return res.body.data.name as string;
};
const update = async (name: string, description: string) =>
  expect(
    (
      await t.http
        .put(`/api/v2/document/ToDo/${name}`)
        .set('Authorization', t.adminToken)
        .send({ description })
    ).status,
  ).toBe(200);

test('handshake: token, Basic and sid cookie authenticate; none is Guest; bad credentials are refused', async () => {
  const [key, secret] = u1.slice('token '.length).split(':') as [string, string];
  const login = await t.http.post('/api/method/login').send({ usr: 'u1@rt.test', pwd: 'u1-password-1' });
  const sid = String(login.headers['set-cookie']?.[0]).split(';')[0] as string;
  const name = await create(u1, 'u1 doc');
  for (const headers of [
    auth(u1),
    auth(`Basic ${Buffer.from(`${key}:${secret}`).toString('base64')}`),
    { Cookie: sid },
  ]) {
    const s = await open(headers);
    expect(await s.emitWithAck('doc_subscribe', 'ToDo', name)).toEqual({ ok: true });
  }
  const guest = await open();
  expect(await guest.emitWithAck('doc_subscribe', 'ToDo', name)).toMatchObject({ ok: false });
  await expect(open(auth('token nope:wrong'))).rejects.toThrow(/Invalid API key or secret/);
  await expect(open(auth('Bearer not-a-token'))).rejects.toThrow(/bearer/i);
});

test('a handshake from a page of another site is refused; the own origin and allowed_referrers pass', async () => {
  const host = new URL(base).host;
  await expect(open({ Origin: 'https://evil.example' })).rejects.toThrow(/another site/);
  await expect(open({ ...auth(u1), Origin: 'null' })).rejects.toThrow(/another site/);
  const own = await open({ ...auth(u1), Origin: `http://${host}` });
  expect(own.connected).toBe(true);
  t.site.config.site.allowed_referrers = ['https://app.example'];
  try {
    expect((await open({ Origin: 'https://app.example' })).connected).toBe(true);
  } finally {
    t.site.config.site.allowed_referrers = [];
  }
});

test('namespaces: / and /<site_name> (the Host without its port) serve; another name is refused', async () => {
  const named = await open(auth(t.adminToken), '/127.0.0.1');
  const updates = collect(named, 'doc_update');
  const name = await create(t.adminToken, 'named ns');
  expect(await named.emitWithAck('doc_subscribe', 'ToDo', name)).toEqual({ ok: true });
  await update(name, 'changed');
  await until(() => updates.length === 1);
  expect(updates[0]).toEqual({ doctype: 'ToDo', name, modified: expect.any(String) });
  await expect(open(auth(t.adminToken), '/another-site')).rejects.toThrow(/Unknown namespace/);
});

test('doc_update to doc:<doctype>/<name>, list_update to doctype:<doctype>, each per the reader’s permission', async () => {
  const own = await create(u1, 'u1 own');
  const adminDoc = await create(t.adminToken, 'admin only');
  const s1 = await open(auth(u1));
  const sm = await open(auth(manager));
  const list1 = collect(s1, 'list_update');
  const listSm = collect(sm, 'list_update');
  const doc1 = collect(s1, 'doc_update');
  expect(await s1.emitWithAck('doctype_subscribe', 'ToDo')).toEqual({ ok: true });
  expect(await sm.emitWithAck('doctype_subscribe', 'ToDo')).toEqual({ ok: true });
  expect(await s1.emitWithAck('doc_subscribe', 'ToDo', own)).toEqual({ ok: true });
  // Refused at subscribe: another user's document.
  expect(await s1.emitWithAck('doc_subscribe', 'ToDo', adminDoc)).toEqual({
    ok: false,
    error: 'Not permitted',
  });
  await update(adminDoc, 'admin change');
  await update(own, 'own change');
  const fresh = await create(u2, 'u2 doc');
  await until(() => listSm.length === 3 && doc1.length === 1 && list1.length === 1);
  await settle();
  expect(list1).toEqual([{ doctype: 'ToDo', name: own, user: 'Administrator' }]);
  expect(listSm.map((e) => e.name)).toEqual([adminDoc, own, fresh]);
  expect(doc1.map((e) => e.name)).toEqual([own]);
  expect(await s1.emitWithAck('doctype_unsubscribe', 'ToDo')).toEqual({ ok: true });
  await update(own, 'after unsubscribe');
  await until(() => doc1.length === 2);
  await settle();
  expect(list1).toHaveLength(1);
  // Its delete too, as Frappe's delete_doc calls notify_update: the form following it learns it is gone.
  expect(
    (await t.http.delete(`/api/v2/document/ToDo/${own}`).set('Authorization', t.adminToken)).status,
  ).toBe(202);
  await until(() => doc1.length === 3);
  expect(doc1[2]).toMatchObject({ doctype: 'ToDo', name: own });
});

test('permission is checked again per event: a reader who lost its role gets nothing more', async () => {
  const target = await create(t.adminToken, 'watched by the manager');
  await createUser(t, 'fading@rt.test', ['System Manager']).then(async (token) => {
    const s = await open(auth(token));
    const got = collect(s, 'doc_update');
    expect(await s.emitWithAck('doc_subscribe', 'ToDo', target)).toEqual({ ok: true });
    await update(target, 'one');
    await until(() => got.length === 1);
    const res = await t.http
      .put('/api/v2/document/User/fading@rt.test')
      .set('Authorization', t.adminToken)
      .send({ roles: [] });
    expect(res.status).toBe(200);
    await update(target, 'two');
    await settle();
    expect(got).toHaveLength(1);
  });
});

test('many sockets of several users: each gets exactly what its user may read, User Permissions included', async () => {
  const wide = await createUser(t, 'wide@rt.test', ['System Manager']);
  const narrow = await createUser(t, 'narrow@rt.test', ['System Manager']);
  const owner = await createUser(t, 'owner@rt.test', []);
  const a = await create(t.adminToken, 'a: narrow may read');
  const perm = await t.http
    .post('/api/v2/document/User Permission')
    .set('Authorization', t.adminToken)
    .send({ user: 'narrow@rt.test', allow: 'ToDo', for_value: a });
  expect(perm.status).toBe(201);
  // Three sockets per user, in both namespaces, all subscribed to the list.
  const lists: Record<string, any[][]> = { wide: [], narrow: [], owner: [] };
  for (const [who, token] of [
    ['wide', wide],
    ['narrow', narrow],
    ['owner', owner],
  ] as const)
    for (const namespace of ['/', '/127.0.0.1', '/']) {
      const s = await open(auth(token), namespace);
      lists[who]!.push(collect(s, 'list_update'));
      expect(await s.emitWithAck('doctype_subscribe', 'ToDo')).toEqual({ ok: true });
    }
  const b = await create(t.adminToken, 'b: only wide');
  const own = await create(owner, 'own: wide and its owner');
  await update(a, 'a changed');
  const names = (got: any[]) => got.map((e) => e.name);
  await until(() => lists.wide!.every((got) => got.length === 3));
  await settle();
  for (const got of lists.wide!) expect(names(got)).toEqual([b, own, a]);
  for (const got of lists.narrow!) expect(names(got)).toEqual([a]);
  for (const got of lists.owner!) expect(names(got)).toEqual([own]);
  // A User Permission given to `wide` restricts it from the next event on.
  const later = await t.http
    .post('/api/v2/document/User Permission')
    .set('Authorization', t.adminToken)
    .send({ user: 'wide@rt.test', allow: 'ToDo', for_value: own });
  expect(later.status).toBe(201);
  await update(b, 'b changed');
  await update(own, 'own changed');
  await until(() => lists.wide!.every((got) => got.length === 4));
  await settle();
  for (const got of lists.wide!) expect(names(got)).toEqual([b, own, a, own]);
  for (const got of lists.narrow!) expect(names(got)).toEqual([a]);
  for (const got of lists.owner!) expect(names(got)).toEqual([own, own]);
});

test('a delete reaches only the users who could read the document, by its Link values too', async () => {
  const limited = await createUser(t, 'limited@rt.test', ['System Manager']);
  // Limited to ToDos allocated to itself (or to no one): a User Permission on a Link field's target.
  const perm = await t.http
    .post('/api/v2/document/User Permission')
    .set('Authorization', t.adminToken)
    .send({ user: 'limited@rt.test', allow: 'User', for_value: 'limited@rt.test' });
  expect(perm.status).toBe(201);
  const s = await open(auth(limited));
  const got = collect(s, 'list_update');
  expect(await s.emitWithAck('doctype_subscribe', 'ToDo')).toEqual({ ok: true });
  const allocate = async (to: string) => {
    const res = await t.http
      .post('/api/v2/document/ToDo')
      .set('Authorization', t.adminToken)
      .send({ description: `for ${to}`, allocated_to: to });
    expect(res.status).toBe(201);
    return res.body.data.name as string;
  };
  const hidden = await allocate('Administrator');
  const shown = await allocate('limited@rt.test');
  for (const name of [hidden, shown])
    expect(
      (await t.http.delete(`/api/v2/document/ToDo/${name}`).set('Authorization', t.adminToken)).status,
    ).toBe(202);
  await until(() => got.length >= 2);
  await settle();
  expect(got.map((e) => e.name)).toEqual([shown, shown]);
});

test('a client that starts on polling and upgrades to the websocket gets a burst of events, each once', async () => {
  const socket = connect(base, {
    path: '/socket.io',
    transports: ['polling', 'websocket'],
    extraHeaders: auth(t.adminToken),
    reconnection: false,
    forceNew: true,
  });
  sockets.push(socket);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('connect_error', reject);
  });
  await until(() => socket.io.engine.transport.name === 'websocket');
  const got = collect(socket, 'list_update');
  expect(await socket.emitWithAck('doctype_subscribe', 'ToDo')).toEqual({ ok: true });
  // Concurrent creates: committed together, delivered as one batch (one flush of several frames per socket).
  const names = await Promise.all(Array.from({ length: 8 }, (_, i) => create(t.adminToken, `burst ${i}`)));
  await until(() => got.length >= names.length);
  await settle();
  expect(got.map((e) => e.name).sort()).toEqual([...names].sort());
});

test('Single DocTypes get doc_update but no list_update; child DocTypes cannot be followed', async () => {
  const s = await open(auth(t.adminToken));
  const lists = collect(s, 'list_update');
  const docs = collect(s, 'doc_update');
  expect(await s.emitWithAck('doctype_subscribe', 'System Settings')).toEqual({ ok: true });
  expect(await s.emitWithAck('doc_subscribe', 'System Settings', 'System Settings')).toEqual({ ok: true });
  expect(await s.emitWithAck('doctype_subscribe', 'Has Role')).toMatchObject({ ok: false });
  const res = await t.http
    .put('/api/v2/document/System Settings/System Settings')
    .set('Authorization', t.adminToken)
    .send({ log_api_requests: 0 });
  expect(res.status).toBe(200);
  await until(() => docs.length === 1);
  await settle();
  expect(docs[0]).toMatchObject({ doctype: 'System Settings', name: 'System Settings' });
  expect(lists).toEqual([]);
});

test('doc_open / doc_close tell the document’s viewers who has it open', async () => {
  const name = await create(t.adminToken, 'shared view');
  const a = await open(auth(t.adminToken));
  const b = await open(auth(manager));
  const seenByA = collect(a, 'doc_viewers');
  expect(await a.emitWithAck('doc_open', 'ToDo', name)).toEqual({ ok: true });
  expect(await b.emitWithAck('doc_open', 'ToDo', name)).toEqual({ ok: true });
  await until(() => seenByA.length === 1);
  expect(seenByA[0]).toEqual({ doctype: 'ToDo', docname: name, users: ['Administrator', 'manager@rt.test'] });
  b.disconnect();
  await until(() => seenByA.length === 2);
  expect(seenByA[1]).toEqual({ doctype: 'ToDo', docname: name, users: ['Administrator'] });
  const u1Socket = await open(auth(u1));
  expect(await u1Socket.emitWithAck('doc_open', 'ToDo', name)).toMatchObject({ ok: false });
});

test('doc_viewers reaches only users who may read the document now, and names only them', async () => {
  const own = await create(u1, 'u1 views this');
  const other = await create(u1, 'the one u1 is limited to');
  const viewer = await open(auth(u1));
  const admin = await open(auth(t.adminToken));
  const seenByU1 = collect(viewer, 'doc_viewers');
  const seenByAdmin = collect(admin, 'doc_viewers');
  expect(await viewer.emitWithAck('doc_open', 'ToDo', own)).toEqual({ ok: true });
  expect(await admin.emitWithAck('doc_open', 'ToDo', own)).toEqual({ ok: true });
  await until(() => seenByU1.length === 1 && seenByAdmin.length === 1);
  // A User Permission limits u1 to the other ToDo: the open one is no longer readable by u1.
  const limit = await t.http
    .post('/api/resource/User Permission')
    .set('Authorization', t.adminToken)
    .send({ user: 'u1@rt.test', allow: 'ToDo', for_value: other });
  expect(limit.status).toBe(201);
  expect((await t.http.get(`/api/v2/document/ToDo/${own}`).set('Authorization', u1)).status).toBe(403);
  expect(await admin.emitWithAck('doc_close', 'ToDo', own)).toEqual({ ok: true });
  expect(await admin.emitWithAck('doc_open', 'ToDo', own)).toEqual({ ok: true });
  const third = await open(auth(manager));
  expect(await third.emitWithAck('doc_open', 'ToDo', own)).toEqual({ ok: true });
  await until(() => seenByAdmin.length >= 2);
  await settle();
  expect(seenByAdmin[1]).toEqual({
    doctype: 'ToDo',
    docname: own,
    users: ['Administrator', 'manager@rt.test'],
  });
  expect(seenByU1).toHaveLength(1);
});

test('task_subscribe follows a bulk job: task_progress, then task_complete; others’ jobs are refused', async () => {
  const res = await t.http
    .post('/api/v2/document/ToDo/bulk_insert')
    .set('Authorization', u1)
    .send({ docs: Array.from({ length: 6 }, (_, i) => ({ description: `job item ${i}` })) });
  expect(res.status).toBe(202);
  const id = res.body.data.job_id as string;
  const s = await open(auth(u1));
  const progress = collect(s, 'task_progress');
  const complete = collect(s, 'task_complete');
  expect(await s.emitWithAck('task_subscribe', id)).toEqual({ ok: true });
  const other = await open(auth(u2));
  expect(await other.emitWithAck('task_subscribe', id)).toMatchObject({ ok: false });
  await until(() => complete.length === 1, 20_000);
  expect(complete[0]).toMatchObject({ task_id: id, status: 'finished', error: null });
  expect(complete[0].result.inserted).toHaveLength(6);
  expect(progress.length).toBeGreaterThan(0);
  expect(progress[progress.length - 1]).toEqual({ task_id: id, progress: 6, total: 6 });
});

test('task_subscribe follows a Data Import: progress in documents, then its counts', async () => {
  const csv = `description\n${Array.from({ length: 40 }, (_, i) => `imported ${i}`).join('\n')}\n`;
  const url = await uploadFile(t, t.adminToken, csv, 'progress.csv');
  const name = await newImport(t, t.adminToken, 'ToDo', url);
  const start = await callImportMethod(t, t.adminToken, 'form_start_import', { data_import: name });
  expect(start.status).toBe(200);
  const id = start.body.data.job_id as string;
  const s = await open(auth(t.adminToken));
  const progress = collect(s, 'task_progress');
  const complete = collect(s, 'task_complete');
  expect(await s.emitWithAck('task_subscribe', id)).toEqual({ ok: true });
  await until(() => complete.length === 1, 20_000);
  expect(complete[0]).toMatchObject({
    task_id: id,
    status: 'finished',
    result: { total: 40, success_count: 40, failure_count: 0 },
  });
  expect(progress[progress.length - 1]).toEqual({ task_id: id, progress: 40, total: 40 });
});

test('hostile arguments are refused through the ack and join nothing', async () => {
  const s = await open(auth(t.adminToken));
  const got = collect(s, 'list_update');
  for (const args of [[{ $ne: 1 }], [['ToDo']], ['x'.repeat(141)], [''], []])
    expect(await s.emitWithAck('doctype_subscribe', ...args)).toMatchObject({ ok: false });
  expect(await s.emitWithAck('doc_subscribe', 'ToDo')).toMatchObject({ ok: false });
  expect(await s.emitWithAck('doctype_subscribe', 'No Such DocType')).toMatchObject({ ok: false });
  await create(t.adminToken, 'nobody listens');
  await settle();
  expect(got).toEqual([]);
});

test('a user who may no longer follow a job gets no more of its progress', async () => {
  const watcher = await createUser(t, 'watcher@rt.test', ['System Manager']);
  // About 3 ms per item: the job runs for a couple of seconds.
  const script = await saveScript(t, {
    script_type: 'DocType Event',
    reference_doctype: 'ToDo',
    doctype_event: 'Before Insert',
    script:
      "if (doc.description.startsWith('long job')) { const end = Date.now() + 3; while (Date.now() < end) {} }",
  });
  const res = await t.http
    .post('/api/v2/document/ToDo/bulk_insert')
    .set('Authorization', u1)
    .send({ docs: Array.from({ length: 800 }, (_, i) => ({ description: `long job ${i}` })) });
  expect(res.status).toBe(202);
  const id = res.body.data.job_id as string;
  const mine = await open(auth(u1));
  const ownComplete = collect(mine, 'task_complete');
  expect(await mine.emitWithAck('task_subscribe', id)).toEqual({ ok: true });
  const s = await open(auth(watcher));
  const seen: string[] = [];
  for (const event of ['task_progress', 'task_complete']) s.on(event, () => seen.push(event));
  expect(await s.emitWithAck('task_subscribe', id)).toEqual({ ok: true });
  const removed = await t.http
    .put('/api/v2/document/User/watcher@rt.test')
    .set('Authorization', t.adminToken)
    .send({ roles: [] });
  expect(removed.status).toBe(200);
  const cut = Date.now();
  // The socket delivers in order: what the server sent the watcher before it answered this (an argument it refuses,
  // which joins nothing) arrives before the answer, however late the busy process delivers it.
  expect(await s.emitWithAck('doctype_subscribe', '')).toMatchObject({ ok: false });
  const beforeAnswer = seen.length;
  await until(() => ownComplete.length === 1, 60_000);
  await t.http
    .put(`/api/resource/Server Script/${script}`)
    .set('Authorization', t.adminToken)
    .send({ disabled: 1 });
  expect(ownComplete[0]).toMatchObject({ task_id: id, status: 'finished' });
  expect(Date.now() - cut).toBeGreaterThan(1000);
  // What was on its way when the role went may arrive: at most the one read of the job in progress then (reads are
  // one at a time, every 250 ms) sends one more progress event. Nothing read after it, and not the job's end.
  expect(seen.slice(beforeAnswer).length).toBeLessThanOrEqual(1);
  expect(seen).not.toContain('task_complete');
}, 90_000);
