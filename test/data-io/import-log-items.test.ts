// The import job's item store is its Data Import Log (runtime/data-import/import-log.ts): a document's outcome is its
// log row, keyed by (data_import, log_index) through the row's name. A second outcome for a document cannot commit
// with a write (so that write rolls back), a later failure outcome is ignored, and the store reads back what it holds.
import { logItemStore, type LoggedOutcome } from '../../runtime/data-import/import-log';
import { inWriteTransaction } from '../../runtime/db/write-transaction';
import { DuplicateEntryError } from '../../runtime/errors/errors';
import { createTestSite, type TestSite } from '../helpers/test-site';

let t: TestSite;
beforeAll(async () => {
  t = await createTestSite();
});
afterAll(() => t.close());

const ok = (name: string, lines: number[]): LoggedOutcome => ({ ok: true, name, doctype: 'ToDo', lines });
const failed = (message: string, lines: number[]): LoggedOutcome => ({
  ok: false,
  name: null,
  doctype: 'ToDo',
  error: 'ValidationError',
  message,
  lines,
});

test('the first outcome of a document stands; a second write with one rolls back; failures are logged once', async () => {
  const store = logItemStore(t.site, {
    id: 'job-1',
    user: 'Administrator',
    payload: { data_import: 'imp-a' },
  });
  const other = logItemStore(t.site, {
    id: 'job-2',
    user: 'Administrator',
    payload: { data_import: 'imp-b' },
  });
  await inWriteTransaction(t.site.db, (q) => store.recordIn(q, 0, ok('todo-0', [2])));
  await inWriteTransaction(t.site.db, (q) => other.recordIn(q, 0, ok('todo-b', [2])));

  // A second run of document 0 (another worker): its write and its log row roll back together.
  await expect(
    inWriteTransaction(t.site.db, async (q) => {
      await q('tabToDo').insert({ name: 'second-run', description: 'twice', status: 'Open' });
      await store.recordIn(q, 0, ok('second-run', [2]));
    }),
  ).rejects.toBeInstanceOf(DuplicateEntryError);
  expect(await t.site.db.knex('tabToDo').where({ name: 'second-run' }).first()).toBeUndefined();

  await inWriteTransaction(t.site.db, (q) => store.recordOnce(q, 0, failed('late failure', [2])));
  await inWriteTransaction(t.site.db, (q) => store.recordOnce(q, 1, failed('bad cell', [3, 4])));
  await inWriteTransaction(t.site.db, (q) => store.recordOnce(q, 1, failed('again', [3, 4])));

  expect(await store.count()).toBe(2);
  expect(await store.outcomes()).toEqual(
    new Map([
      [0, { ok: true, name: 'todo-0' }],
      [1, { ok: false, name: null }],
    ]),
  );
  const rows = await t.site.db
    .knex('tabData Import Log')
    .where({ data_import: 'imp-a' })
    .orderBy('log_index')
    .select('log_index', 'success', 'docname', 'row_indexes', 'messages');
  expect(
    rows.map((r) => [Number(r.log_index), Number(r.success), r.docname, JSON.parse(r.row_indexes)]),
  ).toEqual([
    [0, 1, 'todo-0', [2]],
    [1, 0, null, [3, 4]],
  ]);
  expect(JSON.parse(rows[1].messages)).toEqual([{ message: 'bad cell', exc_type: 'ValidationError' }]);
  // The rows are the import's log: they stay when the job ends.
  await inWriteTransaction(t.site.db, (q) => store.release(q));
  expect(await store.count()).toBe(2);
});
