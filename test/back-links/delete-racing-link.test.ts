// A delete racing a save that links to the same document: whichever reaches the target first, never both commit (no
// document is left linking to a deleted one). A save's Link check locks the row it finds until its commit (MariaDB
// `lock in share mode`, PostgreSQL `for key share`; SQLite has one writer): a delete that comes second waits for the
// save, then finds its link (400 LinkExistsError); a save that comes second waits for the delete, then finds no row
// (400 LinkValidationError). The race is held open by the fixtures' controllers (race-gate.ts).
import type { TestSite } from '../helpers/test-site';
import { create, createBackLinksSite, exists } from './back-links-site';
import { holdAt } from './race-gate';

let t: TestSite;
beforeAll(async () => {
  t = await createBackLinksSite();
});
afterAll(() => t.close());

const auth = () => ({ Authorization: t.adminToken });
/** Long enough for the second request to reach the database and wait there (or, before the lock, to finish). */
const settle = () => new Promise((resolve) => setTimeout(resolve, 400));

test('a delete that comes while a save linking to the document is open waits for it, then is refused', async () => {
  const team = await create(t, 'Audit Team', { name: 'race-team-1' });
  const gate = holdAt('after_insert');
  const saved = t.http
    .post('/api/v2/document/Audit Hash')
    .set(auth())
    .send({ name: 'race-hash-1', team })
    .then((res) => res);
  await gate.entered;
  const deleting = t.http
    .delete(`/api/v2/document/Audit Team/${team}`)
    .set(auth())
    .then((res) => res);
  await settle();
  gate.release();
  const [created, deleted] = await Promise.all([saved, deleting]);
  expect(created.status).toBe(201);
  expect([deleted.status, deleted.body.exc_type]).toEqual([400, 'LinkExistsError']);
  expect(await exists(t, 'Audit Team', team)).toBe(true);
  expect(await exists(t, 'Audit Hash', 'race-hash-1')).toBe(true);
});

test('a save linking to a document while its delete is open waits for it, then finds no document', async () => {
  const team = await create(t, 'Audit Team', { name: 'race-team-2' });
  const gate = holdAt('on_trash');
  const deleting = t.http
    .delete(`/api/v2/document/Audit Team/${team}`)
    .set(auth())
    .then((res) => res);
  await gate.entered;
  const saved = t.http
    .post('/api/v2/document/Audit Hash')
    .set(auth())
    .send({ name: 'race-hash-2', team })
    .then((res) => res);
  await settle();
  gate.release();
  const [deleted, created] = await Promise.all([deleting, saved]);
  expect(deleted.status).toBe(202);
  expect([created.status, created.body.exc_type]).toEqual([400, 'LinkValidationError']);
  expect(await exists(t, 'Audit Team', team)).toBe(false);
  expect(await exists(t, 'Audit Hash', 'race-hash-2')).toBe(false);
});
