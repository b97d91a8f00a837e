// The File document's rules: attaching needs write on the target, file_url only of this site's files the caller may
// read (never fetched), bytes removed with the last File naming them, attachments deleted with their document,
// Attach/Attach Image fields take only readable files of this site.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fixtureRegistry } from '../helpers/fixture-registry';
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';
import { everyStoredFile, fileRows, filesRoot, storedNames, upload } from './file-helpers';

let t: TestSite;
let alice: string;
let bob: string;
let bobPrivateUrl: string;
beforeAll(async () => {
  t = await createTestSite({ registry: await fixtureRegistry() });
  alice = await createUser(t, 'alice-rules@example.com', []);
  bob = await createUser(t, 'bob-rules@example.com', []);
  const res = await upload(t, bob, 'bob private bytes', 'bob.txt', { is_private: '1' });
  bobPrivateUrl = res.body.message.file_url;
});
afterAll(() => t.close());

async function holder(auth: string, title = 'holder'): Promise<string> {
  const res = await t.http.post('/api/resource/File Holder').set('Authorization', auth).send({ title });
  expect(res.status).toBe(201);
  return res.body.data.name;
}

test('security 6.5 #46: attaching to User/Administrator as an ordinary user is 403, nothing stored', async () => {
  const before = everyStoredFile(t);
  const rows = (await fileRows(t)).length;
  const res = await upload(t, alice, 'attach me', 'a.txt', { doctype: 'User', docname: 'Administrator' });
  expect(res.status).toBe(403);
  expect(res.body.exc_type).toBe('PermissionError');
  expect(everyStoredFile(t)).toEqual(before);
  expect((await fileRows(t)).length).toBe(rows);
});

test("attaching to another user's document is 403; to one's own is 200 with attached_to_*", async () => {
  const bobs = await holder(bob);
  const refused = await upload(t, alice, 'x', 'x.txt', { doctype: 'File Holder', docname: bobs });
  expect(refused.status).toBe(403);
  const mine = await holder(alice);
  const ok = await upload(t, alice, 'mine', 'mine.txt', {
    doctype: 'File Holder',
    docname: mine,
    fieldname: 'attachment',
  });
  expect(ok.status).toBe(200);
  expect(ok.body.message).toMatchObject({
    attached_to_doctype: 'File Holder',
    attached_to_name: mine,
    attached_to_field: 'attachment',
  });
  const missing = await upload(t, alice, 'y', 'y.txt', { doctype: 'File Holder', docname: 'no-such-doc' });
  expect(missing.status).toBe(404);
});

test("security 6.5 #47: file_url of another user's private file, by upload_file or a File row, is 403", async () => {
  const rows = (await fileRows(t)).length;
  const viaUpload = await t.http
    .post('/api/method/upload_file')
    .set('Authorization', alice)
    .field('file_url', bobPrivateUrl);
  expect(viaUpload.status).toBe(403);
  const viaResource = await t.http
    .post('/api/resource/File')
    .set('Authorization', alice)
    .send({ file_url: bobPrivateUrl, file_name: 'mine-now.txt' });
  expect(viaResource.status).toBe(403);
  expect((await fileRows(t)).length).toBe(rows);
});

test('file_url of a file the caller may read makes a new File row sharing the bytes', async () => {
  const own = await upload(t, alice, 'alice private', 'alice.txt', { is_private: '1' });
  const again = await t.http
    .post('/api/v2/method/upload_file')
    .set('Authorization', alice)
    .field('file_url', own.body.message.file_url);
  expect(again.status).toBe(200);
  expect(again.body.data).toMatchObject({
    file_url: own.body.message.file_url,
    is_private: 1,
    content_hash: own.body.message.content_hash,
    file_size: own.body.message.file_size,
  });
});

test.each([
  'file:///etc/passwd',
  'http://169.254.169.254/latest/meta-data/',
  'http://127.0.0.1:3000/',
  'http://0x7f000001/',
  '/files/../site.sqlite',
  '/api/resource/User',
])('security 6.5 #48: file_url %s is 400 before anything is fetched', async (url) => {
  const res = await t.http.post('/api/method/upload_file').set('Authorization', alice).field('file_url', url);
  expect(res.status).toBe(400);
  expect(res.body.exc_type).toBe('ValidationError');
});

test('the stored facts of a File cannot be changed through the resource API', async () => {
  const own = await upload(t, alice, 'fixed facts', 'fixed.txt');
  const res = await t.http
    .put(`/api/resource/File/${own.body.message.name}`)
    .set('Authorization', alice)
    .send({ file_url: bobPrivateUrl });
  expect(res.status).toBe(400);
  const renamed = await t.http
    .put(`/api/resource/File/${own.body.message.name}`)
    .set('Authorization', alice)
    .send({ file_name: '../renamed.txt' });
  expect(renamed.status).toBe(200);
  expect(renamed.body.data.file_name).toBe('renamed.txt');
});

test('deleting a File removes its bytes only when no other File shares them', async () => {
  // The same bytes and name twice: one stored name, held by both Files.
  const a = await upload(t, alice, 'shared by two', 'shared.txt');
  const b = await upload(t, alice, 'shared by two', 'shared.txt');
  const stored = a.body.message.file_url.slice('/files/'.length);
  expect(b.body.message.file_url).toBe(a.body.message.file_url);
  const del1 = await t.http.delete(`/api/resource/File/${a.body.message.name}`).set('Authorization', alice);
  expect(del1.status).toBe(202);
  expect(storedNames(t, 'files')).toContain(stored);
  const del2 = await t.http.delete(`/api/resource/File/${b.body.message.name}`).set('Authorization', alice);
  expect(del2.status).toBe(202);
  expect(storedNames(t, 'files')).not.toContain(stored);
  // The same bytes under two names: each File keeps its name; the bytes stay until the last name goes.
  const c = await upload(t, alice, 'shared bytes', 'one-name.txt');
  const d = await upload(t, alice, 'shared bytes', 'other-name.txt');
  expect([c.body.message.file_url, d.body.message.file_url]).toEqual([
    '/files/one-name.txt',
    '/files/other-name.txt',
  ]);
  await t.http.delete(`/api/resource/File/${c.body.message.name}`).set('Authorization', alice).expect(202);
  expect(storedNames(t, 'files')).not.toContain('one-name.txt');
  expect((await t.http.get('/files/other-name.txt')).text).toBe('shared bytes');
  await t.http.delete(`/api/resource/File/${d.body.message.name}`).set('Authorization', alice).expect(202);
  expect(storedNames(t, 'files')).not.toContain('other-name.txt');
  expect(readdirSync(path.join(filesRoot(t), 'blobs'))).not.toContain(c.body.message.content_hash);
});

test('deleting a document deletes its attachments and their bytes', async () => {
  const doc = await holder(alice, 'with attachments');
  const f1 = await upload(t, alice, 'attachment one', 'one.txt', { doctype: 'File Holder', docname: doc });
  const f2 = await upload(t, alice, 'attachment two', 'two.txt', {
    doctype: 'File Holder',
    docname: doc,
    is_private: '1',
  });
  expect([f1.status, f2.status]).toEqual([200, 200]);
  const res = await t.http.delete(`/api/resource/File Holder/${doc}`).set('Authorization', alice);
  expect(res.status).toBe(202);
  expect(await t.site.db.knex('tabFile').where('attached_to_name', doc)).toEqual([]);
  expect(storedNames(t, 'files')).not.toContain(f1.body.message.file_url.slice('/files/'.length));
  expect(storedNames(t, 'private/files')).not.toContain(
    f2.body.message.file_url.slice('/private/files/'.length),
  );
});

test("Attach fields take a readable file of this site: another user's private file 403, a remote URL 400", async () => {
  const own = await upload(t, alice, 'picture bytes', 'pic.png');
  const ok = await t.http
    .post('/api/resource/File Holder')
    .set('Authorization', alice)
    .send({ title: 'attach ok', attachment: own.body.message.file_url });
  expect(ok.status).toBe(201);
  const stolen = await t.http
    .post('/api/resource/File Holder')
    .set('Authorization', alice)
    .send({ title: 'stolen', picture: bobPrivateUrl });
  expect(stolen.status).toBe(403);
  const remote = await t.http
    .post('/api/resource/File Holder')
    .set('Authorization', alice)
    .send({ title: 'remote', attachment: 'http://169.254.169.254/latest/meta-data/' });
  expect(remote.status).toBe(400);
  const unchanged = await t.http
    .put(`/api/resource/File Holder/${ok.body.data.name}`)
    .set('Authorization', alice)
    .send({ title: 'renamed' });
  expect(unchanged.status).toBe(200);
});

describe('Attach fields in child table rows are checked like top-level ones', () => {
  const rowsOf = async (name: string) =>
    (await t.site.db.knex('tabFile Holder Row').where('parent', name).orderBy('idx')) as Record<
      string,
      unknown
    >[];

  test.each([
    ['an external URL', 'document', () => 'https://example.com/evil.pdf', 400],
    ['a metadata URL', 'photo', () => 'http://169.254.169.254/latest/meta-data/', 400],
    ['a traversal', 'document', () => '/files/../site.sqlite', 400],
    ['an encoded traversal', 'photo', () => '/private/files/..%2f..%2fsite.sqlite', 400],
    ['a non-string value', 'document', () => 42 as unknown as string, 400],
    ["another user's private file", 'document', () => bobPrivateUrl, 403],
    ["another user's private file (Attach Image)", 'photo', () => bobPrivateUrl, 403],
  ])('%s in a new row is refused and nothing is written', async (_what, field, value, status) => {
    const rows = await t.site.db.knex('tabFile Holder Row').count({ n: '*' });
    const res = await t.http
      .post('/api/resource/File Holder')
      .set('Authorization', alice)
      .send({ title: 'child hostile', rows: [{ label: 'ok' }, { label: 'bad', [field]: value() }] });
    expect(res.status).toBe(status);
    expect(res.body.exc_type).toBe(status === 400 ? 'ValidationError' : 'PermissionError');
    if (status === 400) expect(res.body.exception).toContain('row 2 of Rows');
    expect(await t.site.db.knex('tabFile Holder Row').count({ n: '*' })).toEqual(rows);
  });

  test("a row's own readable file is accepted; a later save changing it to a stolen file is 403, keeping it is 200", async () => {
    const own = await upload(t, alice, 'row doc bytes', 'row.pdf', { is_private: '1' });
    const url = own.body.message.file_url as string;
    const created = await t.http
      .post('/api/resource/File Holder')
      .set('Authorization', alice)
      .send({ title: 'child ok', rows: [{ label: 'a', document: url, photo: url }] });
    expect(created.status).toBe(201);
    const name = created.body.data.name as string;
    const [row] = await rowsOf(name);
    expect(row).toMatchObject({ document: url, photo: url });
    const stolen = await t.http
      .put(`/api/resource/File Holder/${name}`)
      .set('Authorization', alice)
      .send({ rows: [{ name: row?.name, label: 'a', document: bobPrivateUrl, photo: url }] });
    expect(stolen.status).toBe(403);
    expect((await rowsOf(name))[0]).toMatchObject({ document: url });
    const added = await t.http
      .put(`/api/resource/File Holder/${name}`)
      .set('Authorization', alice)
      .send({ rows: [{ label: 'new', photo: 'http://127.0.0.1:3000/x.png' }] });
    expect(added.status).toBe(400);
    const kept = await t.http
      .put(`/api/resource/File Holder/${name}`)
      .set('Authorization', alice)
      .send({ rows: [{ name: row?.name, label: 'renamed', document: url, photo: url }] });
    expect(kept.status).toBe(200);
    expect((await rowsOf(name))[0]).toMatchObject({ label: 'renamed', document: url });
  });

  test('a System Manager may not put an external URL in a row either (400)', async () => {
    const res = await t.http
      .post('/api/resource/File Holder')
      .set('Authorization', t.adminToken)
      .send({ title: 'admin child', rows: [{ document: 'file:///etc/passwd' }] });
    expect(res.status).toBe(400);
  });
});
