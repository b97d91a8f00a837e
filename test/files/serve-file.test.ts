// Serving stored files: public without credentials, private only to those who may read the File (one refusal whether
// it exists or not), conditional GET, Range, the type from the bytes, active content as a sandboxed download,
// traversal in any spelling 404 (security.md 6.5 #43-#47).
import { rawRequest } from '../api/raw-request';
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';
import { upload } from './file-helpers';

let t: TestSite;
let alice: string;
let bob: string;
let manager: string;
const PNG = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  Buffer.from('fake png body'),
]);
beforeAll(async () => {
  t = await createTestSite();
  alice = await createUser(t, 'alice-serve@example.com', []);
  bob = await createUser(t, 'bob-serve@example.com', []);
  manager = await createUser(t, 'manager-serve@example.com', ['System Manager']);
});
afterAll(() => t.close());

async function uploaded(
  auth: string,
  content: Buffer | string,
  name: string,
  fields: Record<string, string> = {},
) {
  const res = await upload(t, auth, content, name, fields);
  expect(res.status).toBe(200);
  return res.body.message as { file_url: string; name: string };
}

test('a public file is served without credentials: bytes, type from the bytes, validators, nosniff, sandbox', async () => {
  const file = await uploaded(alice, PNG, 'picture.txt');
  const res = await t.http.get(file.file_url).buffer(true);
  expect(res.status).toBe(200);
  expect(Buffer.compare(res.body as Buffer, PNG)).toBe(0);
  expect(res.headers['content-type']).toBe('image/png');
  expect(res.headers['content-length']).toBe(String(PNG.length));
  expect(res.headers['content-disposition']).toMatch(/^inline; filename="picture.txt"/);
  expect(res.headers['x-content-type-options']).toBe('nosniff');
  expect(res.headers['content-security-policy']).toMatch(/sandbox/);
  expect(res.headers.etag).toMatch(/^"[0-9a-f]+-[0-9a-f]+"$/);
  expect(Date.parse(res.headers['last-modified'] as string)).not.toBeNaN();
  expect(res.headers['accept-ranges']).toBe('bytes');
});

test('conditional GET: If-None-Match and If-Modified-Since give 304 without a body', async () => {
  const file = await uploaded(alice, 'conditional bytes', 'cond.txt');
  const first = await t.http.get(file.file_url);
  const byTag = await t.http.get(file.file_url).set('If-None-Match', first.headers.etag as string);
  expect(byTag.status).toBe(304);
  expect(byTag.text ?? '').toBe('');
  const byDate = await t.http
    .get(file.file_url)
    .set('If-Modified-Since', first.headers['last-modified'] as string);
  expect(byDate.status).toBe(304);
  const stale = await t.http.get(file.file_url).set('If-None-Match', '"other"');
  expect(stale.status).toBe(200);
});

test('Range: 206 with Content-Range for a range, a suffix and an open end; 416 past the end', async () => {
  const file = await uploaded(alice, '0123456789abcdef', 'range.txt');
  const mid = await t.http.get(file.file_url).set('Range', 'bytes=2-5');
  expect(mid.status).toBe(206);
  expect(mid.text).toBe('2345');
  expect(mid.headers['content-range']).toBe('bytes 2-5/16');
  const suffix = await t.http.get(file.file_url).set('Range', 'bytes=-3');
  expect([suffix.status, suffix.text]).toEqual([206, 'def']);
  const open = await t.http.get(file.file_url).set('Range', 'bytes=10-');
  expect([open.status, open.text]).toEqual([206, 'abcdef']);
  const past = await t.http.get(file.file_url).set('Range', 'bytes=100-');
  expect(past.status).toBe(416);
  expect(past.headers['content-range']).toBe('bytes */16');
  const several = await t.http.get(file.file_url).set('Range', 'bytes=0-1,4-5');
  expect([several.status, several.text]).toEqual([200, '0123456789abcdef']);
});

test('security 6.5 #43: ../../x.html with a script is stored in the root and served as a sandboxed download', async () => {
  const file = await uploaded(alice, '<script>alert(1)</script>', '../../x.html');
  expect(file.file_url).toMatch(/^\/files\/x(-[0-9a-f]{6})?\.html$/);
  const res = await t.http.get(file.file_url);
  expect(res.status).toBe(200);
  expect(res.headers['content-disposition']).toMatch(/^attachment;/);
  expect(res.headers['x-content-type-options']).toBe('nosniff');
  expect(res.headers['content-security-policy']).toMatch(/sandbox/);
});

test.each([
  [
    'an SVG with a script',
    '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><script>alert(2)</script></svg>',
    'a.svg',
    'image/svg+xml',
  ],
  [
    'XML with an external entity',
    '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x>&e;</x>',
    'a.xml',
    'application/xml',
  ],
  [
    'a .png whose bytes are HTML',
    '<html><body><script>alert(1)</script></body></html>',
    'fake.png',
    'text/html',
  ],
  ['HTML with a BOM and spaces', '\uFEFF  <!DOCTYPE html><p>x</p>', 'b.txt', 'text/html'],
])(
  'security 6.5 #45: %s is never inline: typed from the bytes, served as attachment',
  async (_label, content, name, type) => {
    const file = await uploaded(alice, content, name);
    const res = await t.http.get(file.file_url);
    expect(res.status).toBe(200);
    expect(String(res.headers['content-type']).startsWith(type)).toBe(true);
    expect(res.headers['content-disposition']).toMatch(/^attachment;/);
    expect(res.headers['content-security-policy']).toMatch(/sandbox/);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  },
);

test('security 6.5 #44: a name with CR LF injects no header into the download', async () => {
  const file = await uploaded(alice, 'header injection', 'a\r\nX-Injected: 1.txt');
  const res = await t.http.get(file.file_url);
  expect(res.status).toBe(200);
  expect(res.headers['x-injected']).toBeUndefined();
});

describe('private files', () => {
  let privateUrl: string;
  beforeAll(async () => {
    privateUrl = (await uploaded(bob, 'bob private bytes', 'bob-secret.txt', { is_private: '1' })).file_url;
  });

  test('the owner and a System Manager read it; another user 403, a Guest 401', async () => {
    const own = await t.http.get(privateUrl).set('Authorization', bob);
    expect([own.status, own.text]).toEqual([200, 'bob private bytes']);
    expect(own.headers['cache-control']).toMatch(/private/);
    expect((await t.http.get(privateUrl).set('Authorization', manager)).status).toBe(200);
    const other = await t.http.get(privateUrl).set('Authorization', alice);
    expect([other.status, other.body.exc_type]).toEqual([403, 'PermissionError']);
    const guest = await t.http.get(privateUrl);
    expect([guest.status, guest.body.exc_type]).toEqual([401, 'AuthenticationError']);
  });

  test('security 6.5 #47: a missing private file answers another user exactly as an existing one (403)', async () => {
    const missing = await t.http.get('/private/files/no-such-file.txt').set('Authorization', alice);
    const existing = await t.http.get(privateUrl).set('Authorization', alice);
    expect([missing.status, missing.body.exc_type, missing.body.exception]).toEqual([
      existing.status,
      existing.body.exc_type,
      existing.body.exception,
    ]);
    expect((await t.http.get('/private/files/no-such-file.txt').set('Authorization', manager)).status).toBe(
      404,
    );
  });

  test('the public path of a private file is 404 (the areas are separate)', async () => {
    const res = await t.http.get(privateUrl.replace('/private/files/', '/files/'));
    expect(res.status).toBe(404);
  });

  test('read permission on the attached document grants it; losing it takes the file away', async () => {
    // Note: everyone reads a public Note; only a System Manager sets `public` (permlevel 1).
    const note = await t.http
      .post('/api/resource/Note')
      .set('Authorization', manager)
      .send({ title: 'shared note', public: 1 });
    expect(note.status).toBe(201);
    const file = await uploaded(manager, 'note attachment', 'note.txt', {
      is_private: '1',
      doctype: 'Note',
      docname: note.body.data.name,
    });
    expect((await t.http.get(file.file_url).set('Authorization', alice)).status).toBe(200);
    const hide = await t.http
      .put(`/api/resource/Note/${note.body.data.name}`)
      .set('Authorization', manager)
      .send({ public: 0 });
    expect(hide.status).toBe(200);
    expect((await t.http.get(file.file_url).set('Authorization', alice)).status).toBe(403);
  });
});

test.each([
  '/files/../site.sqlite',
  '/files/..%2f..%2fetc%2fpasswd',
  '/files/%2e%2e/%2e%2e/etc/passwd',
  '/files/%2e%2e%2f%2e%2e%2fetc%2fpasswd',
  '/files/..%5c..%5cwindows%5cwin.ini',
  '/files/..\\..\\x',
  '/files/%252e%252e%252fx',
  '/files/x%00.png',
  '/files/.htaccess',
  '/files/./x',
  '/files//etc/passwd',
  '/private/files/../../files/x',
  '/private/files/%2e%2e%2fprivate.txt',
])('path traversal %s is 404', async (path) => {
  const res = await rawRequest(t.app.callback(), { method: 'GET', path, headers: {}, body: Buffer.alloc(0) });
  expect(res.status).toBe(404);
});

test('a file above the in-memory size is streamed whole and by range; a deleted file is 404 at once', async () => {
  const big = Buffer.alloc(300 * 1024);
  for (let i = 0; i < big.length; i++) big[i] = (i * 31) & 0xff;
  const file = await uploaded(alice, big, 'big.bin');
  const whole = await t.http
    .get(file.file_url)
    .buffer(true)
    .parse((res, done) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => done(null, Buffer.concat(chunks)));
    });
  expect(whole.status).toBe(200);
  expect(Buffer.compare(whole.body as Buffer, big)).toBe(0);
  expect(whole.headers['content-type']).toBe('application/octet-stream');
  const part = await t.http
    .get(file.file_url)
    .set('Range', 'bytes=100000-100009')
    .buffer(true)
    .parse((res, done) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => done(null, Buffer.concat(chunks)));
    });
  expect(part.status).toBe(206);
  expect(Buffer.compare(part.body as Buffer, big.subarray(100000, 100010))).toBe(0);
  const small = await uploaded(alice, 'soon deleted', 'soon.txt');
  expect((await t.http.get(small.file_url)).status).toBe(200);
  expect((await t.http.delete(`/api/resource/File/${small.name}`).set('Authorization', alice)).status).toBe(
    202,
  );
  expect((await t.http.get(small.file_url)).status).toBe(404);
});

test('HEAD on a file answers its headers without the body; an unknown one is 404', async () => {
  const file = await uploaded(alice, PNG, 'head.png');
  const res = await t.http.head(file.file_url);
  expect([res.status, res.headers['content-type'], res.headers['content-length']]).toEqual([
    200,
    'image/png',
    String(PNG.length),
  ]);
  expect(res.headers.etag).toBeTruthy();
  expect(res.text ?? '').toBe('');
  expect((await t.http.head('/files/no-such-file.png')).status).toBe(404);
});
