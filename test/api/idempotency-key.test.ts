// Idempotency-Key on document creates: a retry with the same key and body gets the first answer and makes no second
// document; another body is 422; keys are per user; concurrent requests with one key make one document; a key whose
// answer was never stored (the process died after the commit) answers with the document; malformed keys are 400;
// other routes refuse the header; the key's row holds the first answer when the document commits (nothing is written
// after the commit, so a death right after it loses no answer).
import { lifecycleOf } from '../../runtime/document/extension-points';
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';

let t: TestSite;
let other: string;
beforeAll(async () => {
  t = await createTestSite();
  other = await createUser(t, 'idem-other@example.com', ['System Manager']);
});
afterAll(() => t.close());

const notes = (title: string) => t.site.db.knex('tabNote').where({ title }).count({ n: '*' });
const count = async (title: string) => Number(((await notes(title)) as { n: number }[])[0]!.n);

const post = (path: string, key: string | undefined, body: object, auth = t.adminToken) => {
  const req = t.http.post(path).set('Authorization', auth);
  if (key !== undefined) req.set('Idempotency-Key', key);
  return req.send(body);
};

test.each([
  ['v1', '/api/resource/Note'],
  ['v2', '/api/v2/document/Note'],
])('%s: a retry with the same key and body gets the first answer and no second document', async (v, path) => {
  const title = `idem-retry-${v}`;
  const first = await post(path, `key-${v}-1`, { title });
  expect(first.status).toBe(201);
  expect(first.headers['idempotent-replayed']).toBeUndefined();
  for (let i = 0; i < 3; i++) {
    const again = await post(path, `key-${v}-1`, { title });
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
  }
  expect(await count(title)).toBe(1);
  // Without a key, the same body makes a new document each time.
  expect((await post(path, undefined, { title })).status).toBe(201);
  expect(await count(title)).toBe(2);
});

test('the same key with another body is 422 and creates nothing', async () => {
  expect((await post('/api/resource/Note', 'key-422', { title: 'idem-a' })).status).toBe(201);
  for (const body of [{ title: 'idem-b' }, { title: 'idem-a', content: 'more' }, {}]) {
    const res = await post('/api/resource/Note', 'key-422', body);
    expect(res.status).toBe(422);
    expect(res.body.exc_type).toBe('IdempotencyKeyReusedError');
  }
  // On another DocType or API version it is another request too.
  expect((await post('/api/v2/document/Note', 'key-422', { title: 'idem-a' })).status).toBe(422);
  expect((await post('/api/resource/ToDo', 'key-422', { description: 'idem-a' })).status).toBe(422);
  expect(await count('idem-a')).toBe(1);
  expect(await count('idem-b')).toBe(0);
});

test("a key is the user's own: another user's same key creates its own document", async () => {
  const mine = await post('/api/resource/Note', 'shared-key', { title: 'idem-users' });
  const theirs = await post('/api/resource/Note', 'shared-key', { title: 'idem-users' }, other);
  expect(mine.status).toBe(201);
  expect(theirs.status).toBe(201);
  expect(theirs.headers['idempotent-replayed']).toBeUndefined();
  expect(theirs.body.data.name).not.toBe(mine.body.data.name);
  expect(await count('idem-users')).toBe(2);
});

test('a failed create records nothing: the retry runs again', async () => {
  const bad = await post('/api/resource/ToDo', 'key-failed', { description: 'x', status: 'Nonsense' });
  expect(bad.status).toBe(400);
  const good = await post('/api/resource/ToDo', 'key-failed', { description: 'x', status: 'Nonsense' });
  expect(good.status).toBe(400);
  expect(good.headers['idempotent-replayed']).toBeUndefined();
});

test('concurrent requests with one key make one document, and every answer names it', async () => {
  const answers = await Promise.all(
    Array.from({ length: 8 }, () => post('/api/resource/Note', 'key-race', { title: 'idem-race' })),
  );
  expect(answers.map((a) => a.status)).toEqual(Array(8).fill(201));
  expect(new Set(answers.map((a) => a.body.data.name)).size).toBe(1);
  expect(answers.filter((a) => a.headers['idempotent-replayed'] !== 'true')).toHaveLength(1);
  expect(await count('idem-race')).toBe(1);
});

test('rounds of concurrent requests with one key each: every answer is 201 with one document per key', async () => {
  // On MariaDB a delete-before-insert of the key took gap locks, and the requests deadlocked before any had recorded
  // the key: the victims found nothing to replay and answered 500.
  const failed: string[] = [];
  for (let round = 0; round < 15; round++) {
    const title = `idem-rounds-${round}`;
    const answers = await Promise.all(
      Array.from({ length: 16 }, () => post('/api/resource/Note', `key-rounds-${round}`, { title })),
    );
    for (const a of answers)
      if (a.status !== 201) failed.push(`round ${round}: ${a.status} ${a.body.exc_type}`);
    expect(new Set(answers.map((a) => a.body.data?.name)).size).toBe(1);
    expect(await count(title)).toBe(1);
  }
  expect(failed).toEqual([]);
});

test('an expired key is replaced: the same key then makes a new document, even with another body', async () => {
  const first = await post('/api/v2/document/Note', 'key-expired', { title: 'idem-expired-1' });
  expect(first.status).toBe(201);
  await t.site.db
    .knex('__Idempotency')
    .whereNotNull('id')
    .andWhere('docname', first.body.data.name)
    .update({ created_at: Date.now() - 25 * 3600 * 1000 });
  const again = await post('/api/v2/document/Note', 'key-expired', { title: 'idem-expired-2' });
  expect(again.status).toBe(201);
  expect(again.headers['idempotent-replayed']).toBeUndefined();
  expect(again.body.data.name).not.toBe(first.body.data.name);
  const replay = await post('/api/v2/document/Note', 'key-expired', { title: 'idem-expired-2' });
  expect(replay.headers['idempotent-replayed']).toBe('true');
  expect(replay.body.data.name).toBe(again.body.data.name);
});

test('a key whose answer was never stored (death after the commit) answers with the document', async () => {
  const first = await post('/api/v2/document/Note', 'key-lost', { title: 'idem-lost' });
  expect(first.status).toBe(201);
  await t.site.db.knex('__Idempotency').update({ status: null, body: null });
  const again = await post('/api/v2/document/Note', 'key-lost', { title: 'idem-lost' });
  expect(again.status).toBe(201);
  expect(again.headers['idempotent-replayed']).toBe('true');
  expect(again.body.data.name).toBe(first.body.data.name);
  expect(again.body.data.title).toBe('idem-lost');
  expect(await count('idem-lost')).toBe(1);
});

test('the first answer is committed with the document: the key row holds it when the create commits', async () => {
  // What the key's row held when the create's afterCommit handlers ran (a death then would keep exactly that).
  const atCommit: { status: unknown; body: unknown }[] = [];
  lifecycleOf(t.site).on(
    'afterCommit',
    async (op) => {
      if (op.doc.title !== 'idem-at-commit') return;
      const row = (await t.site.db
        .knex('__Idempotency')
        .where({ docname: String(op.doc.name) })
        .first('status', 'body')) as { status: unknown; body: unknown } | undefined;
      atCommit.push(row ?? { status: 'no row', body: null });
    },
    'Note',
  );
  const first = await post('/api/v2/document/Note', 'key-at-commit', { title: 'idem-at-commit' });
  expect(first.status).toBe(201);
  expect(atCommit).toHaveLength(1);
  expect(Number(atCommit[0]!.status)).toBe(201);
  expect(JSON.parse(String(atCommit[0]!.body))).toEqual(first.body);
});

test('a key older than 24 hours is forgotten: the request runs again', async () => {
  expect((await post('/api/resource/Note', 'key-old', { title: 'idem-old' })).status).toBe(201);
  await t.site.db.knex('__Idempotency').update({ created_at: Date.now() - 24 * 3600 * 1000 - 1000 });
  const again = await post('/api/resource/Note', 'key-old', { title: 'idem-old' });
  expect(again.status).toBe(201);
  expect(again.headers['idempotent-replayed']).toBeUndefined();
  expect(await count('idem-old')).toBe(2);
});

test('the key may come as a structured-field string: "k" is the key k', async () => {
  const a = await post('/api/resource/Note', 'key-sf', { title: 'idem-sf' });
  const b = await post('/api/resource/Note', '"key-sf"', { title: 'idem-sf' });
  expect(b.headers['idempotent-replayed']).toBe('true');
  expect(b.body).toEqual(a.body);
  expect(await count('idem-sf')).toBe(1);
});

test.each([
  ['empty', ''],
  ['256 characters', 'k'.repeat(256)],
  ['a space', 'two words'],
  ['a list of keys', 'a, b'],
  ['a quote inside', '"a"b"'],
  ['non-ASCII', 'cl\u00e9'],
  ['a control character', 'a\tb'],
])('a key with %s is 400 and creates nothing', async (_l, key) => {
  const res = await post('/api/resource/Note', key, { title: 'idem-malformed' });
  expect(res.status).toBe(400);
  expect(await count('idem-malformed')).toBe(0);
});

test('a Guest may not send a key (it would be shared by every anonymous client)', async () => {
  const res = await t.http
    .post('/api/resource/Note')
    .set('Idempotency-Key', 'guest-key')
    .send({ title: 'idem-guest' });
  expect(res.status).toBeGreaterThanOrEqual(400);
  expect(res.status).toBeLessThan(500);
  expect(await count('idem-guest')).toBe(0);
});

test('routes other than a document create refuse the header with 400 and do nothing', async () => {
  const made = await post('/api/resource/Note', undefined, { title: 'idem-other-route' });
  const name = made.body.data.name as string;
  const update = await t.http
    .put(`/api/resource/Note/${name}`)
    .set('Authorization', t.adminToken)
    .set('Idempotency-Key', 'key-put')
    .send({ title: 'changed' });
  expect(update.status).toBe(400);
  const method = await post('/api/method/frappe.client.insert', 'key-method', {
    doc: { doctype: 'Note', title: 'idem-other-route' },
  });
  expect(method.status).toBe(400);
  expect(await count('idem-other-route')).toBe(1);
});
