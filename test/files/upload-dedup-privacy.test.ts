// Deduplicated uploads share bytes, never names (issue #36 item 8): a user uploading bytes another user stored privately
// gets a File with its own name and URL (not the other's `u1-salary.pdf`), and a refused upload leaves no bytes behind.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';
import { filesRoot, storedNames, upload } from './file-helpers';

let t: TestSite;
let u1: string;
let u2: string;
beforeAll(async () => {
  t = await createTestSite();
  u1 = await createUser(t, 'u1-dedup@example.com', []);
  u2 = await createUser(t, 'u2-dedup@example.com', []);
});
afterAll(() => t.close());

const blobs = () => readdirSync(path.join(filesRoot(t), 'blobs')).sort();

test("the same private bytes uploaded by another user keep that user's own name and URL", async () => {
  const bytes = `salary statement ${Date.now()}`;
  const first = await upload(t, u1, bytes, 'u1-salary.pdf', { is_private: '1' });
  expect(first.status).toBe(200);
  expect(first.body.message.file_url).toBe('/private/files/u1-salary.pdf');
  const second = await upload(t, u2, bytes, 'mine.pdf', { is_private: '1' });
  expect(second.status).toBe(200);
  expect(second.body.message).toMatchObject({ file_name: 'mine.pdf', file_url: '/private/files/mine.pdf' });
  expect(JSON.stringify(second.body)).not.toContain('u1-salary');
  // u2 reads its own file; u1's name stays u1's (403 for u2).
  expect((await t.http.get('/private/files/mine.pdf').set('Authorization', u2)).text).toBe(bytes);
  expect((await t.http.get('/private/files/u1-salary.pdf').set('Authorization', u2)).status).toBe(403);
  // One copy of the bytes.
  expect(blobs().filter((b) => b === first.body.message.content_hash)).toHaveLength(1);
});

test('a refused upload (a folder that does not exist: 400) leaves no name, blob or temporary file', async () => {
  const before = { blobs: blobs(), files: storedNames(t, 'files') };
  const res = await upload(t, u1, `orphan ${Date.now()}`, 'orphan.txt', { folder: 'Home/Nowhere' });
  expect(res.status).toBe(400);
  expect(blobs()).toEqual(before.blobs);
  expect(storedNames(t, 'files')).toEqual(before.files);
  expect(storedNames(t, 'tmp/uploads')).toEqual([]);
});

test('a refused upload of bytes another File holds leaves that File and its bytes intact', async () => {
  const bytes = `kept ${Date.now()}`;
  const kept = await upload(t, u1, bytes, 'kept.txt');
  expect(kept.status).toBe(200);
  const refused = await upload(t, u1, bytes, 'kept-again.txt', { folder: 'Home/Nowhere' });
  expect(refused.status).toBe(400);
  expect(storedNames(t, 'files')).not.toContain('kept-again.txt');
  expect((await t.http.get('/files/kept.txt')).text).toBe(bytes);
});
