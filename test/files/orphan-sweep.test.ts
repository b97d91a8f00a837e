// The orphan-file sweep (issue #36 item 8), on real files of a test site's store: bytes no File row accounts for go
// (a name left by a process that died before committing its File, a blob no name links, a dead upload's temporary
// file); every File's name and bytes stay and are still served, bytes a File shares with an orphan name stay, and
// nothing changed within the grace period goes (an upload in flight). The scheduled job runs the same sweep.
import { createHash } from 'node:crypto';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { FILE_SWEEP_JOB, sweepOrphanFiles } from '../../runtime/files/orphan-sweep';
import { siteStorage } from '../../runtime/files/site-files';
import { jobQueueOf } from '../../runtime/jobs/job-queue';
import { ADMINISTRATOR } from '../../runtime/site';
import { createTestSite, type TestSite } from '../helpers/test-site';
import { filesRoot, storedNames, upload } from './file-helpers';

let t: TestSite;
beforeAll(async () => {
  t = await createTestSite();
});
afterAll(() => t.close());

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const blobPath = (hash: string) => path.join(filesRoot(t), 'blobs', hash);
/** A moment, so that what was just written is older than a grace period of 0. */
const tick = () => new Promise((resolve) => setTimeout(resolve, 20));

/** Stores `bytes` under a public `name` as an upload does before its File row commits (no row is ever made). */
async function orphanName(name: string, bytes: string): Promise<string> {
  const temp = path.join(siteStorage(t.site).tempDir(), `test-${name}`);
  writeFileSync(temp, bytes);
  const hash = sha256(bytes);
  expect(await siteStorage(t.site).put({ isPrivate: false, name }, temp, hash)).toBe(true);
  rmSync(temp);
  return hash;
}

/** A blob no name links (its name went, a crash in between); its hash. */
function looseBlob(bytes: string): string {
  writeFileSync(blobPath(sha256(bytes)), bytes);
  return sha256(bytes);
}

test('names, blobs and temporary files no File accounts for go; every File keeps its name and bytes', async () => {
  const keptBytes = `kept bytes ${Date.now()}`;
  const kept = await upload(t, t.adminToken, keptBytes, 'kept.txt');
  expect(kept.status).toBe(200);
  const keptHash: string = kept.body.message.content_hash;
  const secret = await upload(t, t.adminToken, `private ${Date.now()}`, 'secret.txt', { is_private: '1' });
  expect(secret.status).toBe(200);
  // A name whose File never committed, with bytes of its own; one sharing the kept File's bytes.
  const orphanHash = await orphanName('orphan.txt', `orphan bytes ${Date.now()}`);
  await orphanName('orphan-shared.txt', keptBytes);
  const loose = looseBlob(`loose ${Date.now()}`);
  writeFileSync(path.join(siteStorage(t.site).tempDir(), 'upload-dead'), 'partial');
  await tick();

  expect(await sweepOrphanFiles(t.site, 0)).toEqual({ names: 2, blobs: 1, temporary: 1 });
  expect(storedNames(t, 'files')).not.toContain('orphan.txt');
  expect(storedNames(t, 'files')).not.toContain('orphan-shared.txt');
  expect(existsSync(blobPath(orphanHash))).toBe(false);
  expect(existsSync(blobPath(loose))).toBe(false);
  expect(storedNames(t, 'tmp/uploads')).toEqual([]);
  // The Files are untouched and served; the bytes the kept File shared with an orphan name stay.
  expect(existsSync(blobPath(keptHash))).toBe(true);
  expect(storedNames(t, 'files')).toContain('kept.txt');
  expect(storedNames(t, 'private/files')).toContain('secret.txt');
  expect((await t.http.get('/files/kept.txt')).text).toBe(keptBytes);
  const served = await t.http.get('/private/files/secret.txt').set('Authorization', t.adminToken);
  expect(served.text).toMatch(/^private /);
  // Nothing is left to sweep.
  expect(await sweepOrphanFiles(t.site, 0)).toEqual({ names: 0, blobs: 0, temporary: 0 });
});

test('nothing changed within the grace period goes: an upload in flight stays', async () => {
  // Bytes stored and linked a moment ago, as an upload whose File row has not committed yet.
  const inFlight = await orphanName('in-flight.txt', `in flight ${Date.now()}`);
  const loose = looseBlob(`young loose ${Date.now()}`);
  writeFileSync(path.join(siteStorage(t.site).tempDir(), 'upload-streaming'), 'partial');
  await tick();
  expect(await sweepOrphanFiles(t.site, 60_000)).toEqual({ names: 0, blobs: 0, temporary: 0 });
  expect(storedNames(t, 'files')).toContain('in-flight.txt');
  expect(existsSync(blobPath(inFlight))).toBe(true);
  expect(existsSync(blobPath(loose))).toBe(true);
  expect(storedNames(t, 'tmp/uploads')).toEqual(['upload-streaming']);
  // Once the grace period is over, they go.
  await tick();
  expect(await sweepOrphanFiles(t.site, 0)).toEqual({ names: 1, blobs: 1, temporary: 1 });
});

test('a blob whose content hash a File row holds stays, even when no name links it', async () => {
  const bytes = `held ${Date.now()}`;
  const held = await upload(t, t.adminToken, bytes, 'held.txt');
  expect(held.status).toBe(200);
  // The name goes (a File row still holds the content hash): the blob stays for the File's hash.
  rmSync(path.join(filesRoot(t), 'files', 'held.txt'));
  await tick();
  expect(await sweepOrphanFiles(t.site, 0)).toEqual({ names: 0, blobs: 0, temporary: 0 });
  expect(existsSync(blobPath(held.body.message.content_hash))).toBe(true);
});

test('the scheduled job runs the sweep and reports what it removed', async () => {
  await orphanName('job-orphan.txt', `job orphan ${Date.now()}`);
  const queue = jobQueueOf(t.site);
  if (!queue) throw new Error('the test site has no job queue');
  // A job's sweep keeps the default grace period: the orphan made a moment ago stays.
  const id = await queue.enqueue(FILE_SWEEP_JOB, ADMINISTRATOR, {}, 1);
  const end = Date.now() + 30_000;
  let job = await queue.get(id);
  while (job && job.status !== 'finished' && job.status !== 'failed' && Date.now() < end) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    job = await queue.get(id);
  }
  expect(job?.status).toBe('finished');
  expect(job?.result).toEqual({ names: 0, blobs: 0, temporary: 0 });
  expect(storedNames(t, 'files')).toContain('job-orphan.txt');
});
