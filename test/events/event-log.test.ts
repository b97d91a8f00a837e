// The event log: one row per committed insert, save, submit, cancel and delete, written in the document's own
// transaction (a write that rolls back leaves none), bulk requests and bulk jobs included (one per document), ids
// increasing; events past event_retention_hours are pruned.
import request from 'supertest';
import { createApp } from '../../runtime/app';
import { closeSite, openSite } from '../../runtime/bootstrap';
import { SYSTEM_TABLES } from '../../runtime/db/migrate';
import { pruneEvents } from '../../runtime/events/event-log';
import { fixtureRegistry } from '../helpers/fixture-registry';
import { createTestSite, type TestSite } from '../helpers/test-site';
import { saveScript } from '../scripts/script-helpers';

let t: TestSite;
beforeAll(async () => {
  t = await createTestSite({
    registry: await fixtureRegistry(),
    site: { bulk_operation_async_threshold: { ToDo: 5, '*': 20 }, job_poll_ms: 50 },
  });
});
afterAll(() => t.close());

const events = async (after = 0) =>
  (await t.site.db
    .knex(SYSTEM_TABLES.events)
    .where('id', '>', after)
    .orderBy('id')
    .select('id', 'doctype', 'docname', 'action', 'user', 'owner', 'modified')) as Record<string, any>[];
const lastId = async () => {
  const all = await events();
  return all.length ? Number(all[all.length - 1]!.id) : 0;
};
const send = (verb: 'post' | 'put' | 'delete', path: string, body?: object) =>
  t.http[verb](path).set('Authorization', t.adminToken).send(body);

test('insert, update, submit, cancel and delete each write one event, in order', async () => {
  const from = await lastId();
  const created = await send('post', '/api/v2/document/Gadget Order', { customer: 'c1' });
  expect(created.status).toBe(201);
  const name = created.body.data.name as string;
  const path = `/api/v2/document/Gadget Order/${encodeURIComponent(name)}`;
  expect((await send('put', path, { qty: 2 })).status).toBe(200);
  expect((await send('put', path, { docstatus: 1 })).status).toBe(200);
  const cancelled = await send('put', path, { docstatus: 2 });
  expect(cancelled.status).toBe(200);
  expect((await send('delete', path)).status).toBe(202);
  const rows = await events(from);
  expect(rows.map((r) => [r.doctype, r.docname, r.action, r.user])).toEqual([
    ['Gadget Order', name, 'insert', 'Administrator'],
    ['Gadget Order', name, 'save', 'Administrator'],
    ['Gadget Order', name, 'submit', 'Administrator'],
    ['Gadget Order', name, 'cancel', 'Administrator'],
    ['Gadget Order', name, 'delete', 'Administrator'],
  ]);
  const ids = rows.map((r) => Number(r.id));
  expect([...ids].sort((a, b) => a - b)).toEqual(ids);
  expect(new Set(ids).size).toBe(5);
  expect(rows[3]!.modified).toBe(cancelled.body.data.modified);
  expect(rows[4]!.owner).toBe('Administrator');
});

test('a write that rolls back leaves no event', async () => {
  const from = await lastId();
  // A mandatory field missing, and a duplicate name: both refused inside the transaction.
  expect((await send('post', '/api/v2/document/Gadget Order', { qty: 1 })).status).toBe(400);
  const first = await send('post', '/api/v2/document/ToDo', { name: 'dup-event', description: 'x' });
  expect(first.status).toBe(201);
  expect((await send('post', '/api/v2/document/ToDo', { name: 'dup-event', description: 'y' })).status).toBe(
    409,
  );
  expect((await events(from)).map((r) => r.docname)).toEqual([first.body.data.name]);
});

test('concurrent creates sharing a commit (one a duplicate) write one event each, none for the refused', async () => {
  const from = await lastId();
  expect((await send('post', '/api/v2/document/ToDo', { name: 'dup-burst', description: 'x' })).status).toBe(
    201,
  );
  // Sent at once: on MariaDB they share group-commit batches, whose held INSERTs (documents and events) the duplicate
  // makes roll back and run again alone.
  const answers = await Promise.all(
    Array.from({ length: 24 }, (_, i) =>
      send('post', '/api/v2/document/ToDo', {
        ...(i === 11 ? { name: 'dup-burst' } : {}),
        description: `burst ${i}`,
      }),
    ),
  );
  expect(answers.map((a) => a.status).sort()).toEqual([...Array(23).fill(201), 409]);
  const made = answers.filter((a) => a.status === 201).map((a) => a.body.data.name as string);
  const rows = await events(from);
  expect(rows.map((r) => r.docname).sort()).toEqual(['dup-burst', ...made].sort());
  expect(rows.every((r) => r.action === 'insert')).toBe(true);
});

test('a create refused after its event was written (an After Insert script), among others, leaves no event', async () => {
  const script = await saveScript(t, {
    script_type: 'DocType Event',
    reference_doctype: 'ToDo',
    doctype_event: 'After Insert',
    script: "if (doc.description === 'refuse after') frappe.throw('refused after insert')",
  });
  const from = await lastId();
  // Sent at once, so the refused one shares a commit with the others: only its own event goes.
  const answers = await Promise.all(
    Array.from({ length: 12 }, (_, i) =>
      send('post', '/api/v2/document/ToDo', { description: i === 5 ? 'refuse after' : `kept ${i}` }),
    ),
  );
  await send('put', `/api/resource/Server Script/${script}`, { disabled: 1 });
  expect(answers.map((a) => a.status).sort()).toEqual([...Array(11).fill(201), 400]);
  const made = answers.filter((a) => a.status === 201).map((a) => a.body.data.name as string);
  const todoEvents = (await events(from)).filter((r) => r.doctype === 'ToDo');
  expect(todoEvents.map((r) => r.docname).sort()).toEqual([...made].sort());
});

test('a bulk insert writes one event per document; so does a bulk job', async () => {
  const from = await lastId();
  const small = await send('post', '/api/v2/document/ToDo/bulk_insert', {
    docs: [{ description: 'b1' }, { description: 'b2' }, { description: 'b3' }],
  });
  expect(small.status).toBe(200);
  const inserted = small.body.data.inserted as string[];
  expect((await events(from)).map((r) => r.docname)).toEqual(inserted);
  const mid = await lastId();
  const queued = await send('post', '/api/v2/document/ToDo/bulk_insert', {
    docs: Array.from({ length: 8 }, (_, i) => ({ description: `job ${i}` })),
  });
  expect(queued.status).toBe(202);
  const id = queued.body.data.job_id as string;
  let job: any;
  for (const end = Date.now() + 20_000; Date.now() < end;) {
    job = (await t.http.get(`/api/v2/job/${id}`).set('Authorization', t.adminToken)).body.data;
    if (job.status === 'finished' || job.status === 'failed') break;
    await new Promise((r) => setTimeout(r, 50));
  }
  expect(job.status).toBe('finished');
  const rows = await events(mid);
  expect(rows.map((r) => r.docname).sort()).toEqual([...job.result.inserted].sort());
  expect(rows.every((r) => r.action === 'insert' && r.doctype === 'ToDo')).toBe(true);
});

test('events older than event_retention_hours are pruned, never the newest; newer ones stay', async () => {
  const from = await lastId();
  expect((await send('post', '/api/v2/document/ToDo', { description: 'old' })).status).toBe(201);
  expect((await send('post', '/api/v2/document/ToDo', { description: 'new' })).status).toBe(201);
  const [old, young] = await events(from);
  const hour = 3_600_000;
  const table = () => t.site.db.knex(SYSTEM_TABLES.events);
  await table()
    .where('id', '<=', old!.id)
    .update({ created_at: Date.now() - 25 * hour });
  const stale = (await events()).filter((r) => Number(r.id) <= Number(old!.id)).length;
  expect(await pruneEvents(t.site)).toBe(stale);
  expect((await events()).map((r) => r.id)).toEqual([young!.id]);
  // Everything past the retention: the newest stays, so the next id is still larger than every id given out.
  await table().update({ created_at: Date.now() - 25 * hour });
  expect(await pruneEvents(t.site)).toBe(0);
  expect((await events()).map((r) => r.id)).toEqual([young!.id]);
  const next = await send('post', '/api/v2/document/ToDo', { description: 'next' });
  expect(next.status).toBe(201);
  expect(Number((await events(Number(young!.id)))[0]!.id)).toBeGreaterThan(Number(young!.id));
});

test('the first write of a process prunes what is past the retention', async () => {
  const all = await events();
  await t.site.db.knex(SYSTEM_TABLES.events).update({ created_at: Date.now() - 25 * 3_600_000 });
  const other = await openSite({ ...t.site.config }, t.site.registry);
  try {
    const res = await request(createApp(other, { authHooks: [] }).callback())
      .post('/api/v2/document/ToDo')
      .set('Authorization', t.adminToken)
      .send({ description: 'prunes' });
    expect(res.status).toBe(201);
    for (const end = Date.now() + 5000; Date.now() < end;) {
      if ((await events()).length === 1) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const left = await events();
    expect(left).toHaveLength(1);
    expect(Number(left[0]!.id)).toBeGreaterThan(Number(all[all.length - 1]!.id));
  } finally {
    await closeSite(other);
  }
});
