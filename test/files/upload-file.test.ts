// upload_file: multipart streamed to disk, both method prefixes, the File row, dedup by content, names sanitised, limits.
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';
import { statSync } from 'node:fs';
import path from 'node:path';
import { everyStoredFile, fileRows, filesRoot, storedNames, upload } from './file-helpers';

let t: TestSite;
let alice: string;
beforeAll(async () => {
  t = await createTestSite({ site: { max_file_size: 64 * 1024 } });
  alice = await createUser(t, 'alice-upload@example.com', []);
});
afterAll(() => t.close());

/** The inode of a stored file (names holding the same bytes share one). */
const inode = (relative: string) => statSync(path.join(filesRoot(t), relative)).ino;

test('v1 upload answers 200 with the File document in message', async () => {
  const res = await upload(t, t.adminToken, 'hello world', 'hello.txt');
  expect(res.status).toBe(200);
  expect(res.body.message).toMatchObject({
    file_name: 'hello.txt',
    file_url: '/files/hello.txt',
    is_private: 0,
    file_size: 11,
    content_hash: expect.stringMatching(/^[0-9a-f]{64}$/),
  });
  expect(storedNames(t, 'files')).toContain('hello.txt');
  expect(storedNames(t, 'tmp/uploads')).toEqual([]);
});

test('v2 upload answers 200 with the File document in data; is_private stores under private/files', async () => {
  const res = await upload(
    t,
    t.adminToken,
    'secret bytes v2',
    'secret.txt',
    { is_private: '1' },
    '/api/v2/method',
  );
  expect(res.status).toBe(200);
  expect(res.body.data).toMatchObject({ file_url: '/private/files/secret.txt', is_private: 1 });
  expect(storedNames(t, 'private/files')).toContain('secret.txt');
});

test('the same bytes are stored once under each name; a different content under a taken name gets a server-made name', async () => {
  const a = await upload(t, alice, 'same content', 'dup.txt');
  const b = await upload(t, alice, 'same content', 'other-name.txt');
  expect(a.body.message.file_url).toBe('/files/dup.txt');
  expect(b.body.message.file_url).toBe('/files/other-name.txt');
  expect(b.body.message.file_name).toBe('other-name.txt');
  expect(inode('files/dup.txt')).toBe(inode('files/other-name.txt'));
  const c = await upload(t, alice, 'different content', 'dup.txt');
  expect(c.status).toBe(200);
  expect(c.body.message.file_url).toMatch(/^\/files\/dup-[0-9a-f]{6}\.txt$/);
  expect(storedNames(t, 'files').filter((n) => n.startsWith('dup') || n.startsWith('other'))).toHaveLength(3);
});

test.each([
  ['../../x.html', 'x.html'],
  ['..%2f..%2fx.js', '2f..2fx.js'],
  ['x\\..\\..\\y', 'y'],
  ['/etc/passwd', 'passwd'],
  ['CON', '_CON'],
  ['a\r\nX-Injected: 1', 'aX-Injected 1'],
  ['.htaccess', 'htaccess'],
])('file name %j is stored as a sanitised base name', async (raw, expected) => {
  const res = await upload(t, alice, `content of ${raw}`, 'ignored.bin', { file_name: raw });
  expect(res.status).toBe(200);
  const stored = res.body.message.file_url.slice('/files/'.length);
  expect(res.body.message.file_name).toBe(expected);
  expect(stored.startsWith(expected.replace(/\.[^.]*$/, ''))).toBe(true);
  expect(stored).not.toMatch(/[/\\\r\n]/);
});

test('a 300-character name is capped, the extension kept', async () => {
  const res = await upload(t, alice, 'long name', `${'a'.repeat(300)}.txt`);
  expect(res.status).toBe(200);
  expect(res.body.message.file_name).toHaveLength(140);
  expect(res.body.message.file_name.endsWith('.txt')).toBe(true);
});

test('a NUL in the name is 400, nothing stored', async () => {
  const before = everyStoredFile(t);
  const rows = (await fileRows(t)).length;
  const res = await upload(t, alice, 'nul', 'x', { file_name: 'x.html\u0000.png' });
  expect(res.status).toBe(400);
  expect(everyStoredFile(t)).toEqual(before);
  expect((await fileRows(t)).length).toBe(rows);
});

test('over max_file_size is 413 and nothing remains (no row, no bytes, no temp file)', async () => {
  const before = everyStoredFile(t);
  const rows = (await fileRows(t)).length;
  const res = await upload(t, alice, Buffer.alloc(64 * 1024 + 1, 1), 'big.bin');
  expect(res.status).toBe(413);
  expect(res.body.exc_type).toBe('RequestEntityTooLargeError');
  expect(everyStoredFile(t)).toEqual(before);
  expect((await fileRows(t)).length).toBe(rows);
});

test('a 0-byte file is 400', async () => {
  const res = await upload(t, alice, Buffer.alloc(0), 'empty.txt');
  expect(res.status).toBe(400);
});

test('two file parts, or a thousand fields, are refused with 413', async () => {
  const two = await t.http
    .post('/api/method/upload_file')
    .set('Authorization', alice)
    .attach('file', Buffer.from('one'), 'one.txt')
    .attach('file', Buffer.from('two'), 'two.txt');
  expect(two.status).toBe(413);
  let many = t.http.post('/api/method/upload_file').set('Authorization', alice);
  for (let i = 0; i < 1000; i++) many = many.field(`f${i}`, 'x');
  const res = await many.attach('file', Buffer.from('many'), 'many.txt');
  expect(res.status).toBe(413);
  expect(storedNames(t, 'tmp/uploads')).toEqual([]);
});

test('no file and no file_url is 400; GET is 405', async () => {
  const res = await t.http.post('/api/method/upload_file').set('Authorization', alice).field('doctype', '');
  expect(res.status).toBe(400);
  const get = await t.http.get('/api/method/upload_file').set('Authorization', alice);
  expect(get.status).toBe(405);
});

test('20 concurrent uploads of the same bytes give 20 File rows and one stored copy', async () => {
  const content = `concurrent ${Date.now()}`;
  const results = await Promise.all(
    Array.from({ length: 20 }, (_, i) => upload(t, alice, content, `c${i}.txt`)),
  );
  expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
  // Each File keeps its own name and URL; the names are links to one copy of the bytes.
  const urls = new Set(results.map((r) => r.body.message.file_url));
  expect(urls.size).toBe(20);
  const hash = results[0]?.body.message.content_hash;
  expect((await t.site.db.knex('tabFile').where('content_hash', hash)).length).toBe(20);
  const names = storedNames(t, 'files').filter((n) => /^c\d+\.txt$/.test(n));
  expect(names).toHaveLength(20);
  expect(new Set(names.map((n) => inode(`files/${n}`))).size).toBe(1);
});
