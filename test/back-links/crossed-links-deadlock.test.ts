// Two updates that link two documents to each other at once: each locks its own document, then (its Link check) the
// other one, so on MariaDB and PostgreSQL the database ends one as a deadlock's victim. The victim's update runs once
// more in a new transaction and both answer 200 (before: 503 "retry"). On SQLite one writer orders them: both 200.
// A delete that loses a deadlock is run again the same way (the same code path); bulk items have their own
// (test/api/bulk-update-deadlock).
import type { TestSite } from '../helpers/test-site';
import { create, createBackLinksSite } from './back-links-site';
import { holdAt } from './race-gate';

let t: TestSite;
beforeAll(async () => {
  t = await createBackLinksSite();
});
afterAll(() => t.close());

const auth = () => ({ Authorization: t.adminToken });
const link = (from: string, to: string) =>
  t.http
    .put(`/api/v2/document/Audit Task/${from}`)
    .set(auth())
    .send({ related_task: to })
    .then((res) => res);

test('crossed links: both updates answer 200 and both links are stored', async () => {
  const a = await create(t, 'Audit Task', { name: 'cross-a', title: 'a' });
  const b = await create(t, 'Audit Task', { name: 'cross-b', title: 'b' });
  // The first update holds `a` locked in its validate; the second locks `b`, then waits on `a` in its Link check; the
  // first, let go, then waits on `b`: a cycle.
  const gate = holdAt('validate');
  const first = link(a, b);
  await gate.entered;
  const second = link(b, a);
  await new Promise((resolve) => setTimeout(resolve, 400));
  gate.release();
  const answers = await Promise.all([first, second]);
  expect(answers.map((res) => [res.status, res.body.exc_type])).toEqual([
    [200, undefined],
    [200, undefined],
  ]);
  const stored = await t.site.db
    .knex('tabAudit Task')
    .whereIn('name', [a, b])
    .orderBy('name')
    .select('name', 'related_task');
  expect(stored).toEqual([
    { name: a, related_task: b },
    { name: b, related_task: a },
  ]);
});
