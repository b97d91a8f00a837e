// Bulk items share one transaction per batch (SQLite: the group commit; MariaDB: a SavepointBatch), each item in its
// own savepoint: a failing item in the middle of a batch (validation error, duplicate name, hook throwing before or
// after the row is written) rolls back alone, every other item commits, and a rolled-back item takes no series number.
import { BatchRolledBackError } from '../../runtime/db/write-transaction';
import { SavepointBatch } from '../../runtime/db/savepoint-batch';
import { fixtureRegistry } from '../helpers/fixture-registry';
import { connectionOf, waitingForLock } from '../helpers/lock-waits';
import { createTestSite, DB_KIND, type TestSite } from '../helpers/test-site';

let t: TestSite;
beforeAll(async () => {
  t = await createTestSite({
    registry: await fixtureRegistry(),
    site: { bulk_operation_async_threshold: 20, job_poll_ms: 50 },
  });
});
afterAll(() => t.close());

const post = (path: string, body: unknown) =>
  t.http
    .post(path)
    .set('Authorization', t.adminToken)
    .send(body as object);
const seriesNumber = (name: string) => Number(name.split('-').pop());
const stored = async (): Promise<string[]> =>
  ((await t.site.db.knex('tabNamed By Format').select('title')) as { title: string }[]).map((r) => r.title);

/** The items of a batch, with a failing item of each kind at `at` (by position, cycling). */
function items(prefix: string, n: number, failAt: number[], duplicate: string): Record<string, unknown>[] {
  const kinds = [
    { title: 'fail:validate' },
    { title: { not: 'a string' } },
    { name: duplicate, title: `${prefix} dup` },
    { title: 'fail:on_update' },
  ];
  return Array.from({ length: n }, (_, i) => {
    const k = failAt.indexOf(i);
    return k >= 0 ? (kinds[k % kinds.length] as Record<string, unknown>) : { title: `${prefix} ${i}` };
  });
}

async function finished(id: string): Promise<any> {
  const end = Date.now() + 60_000;
  for (;;) {
    const res = await t.http.get(`/api/v2/job/${id}`).set('Authorization', t.adminToken);
    expect(res.status).toBe(200);
    if (res.body.data.status === 'finished' || res.body.data.status === 'failed') return res.body.data;
    if (Date.now() > end) throw new Error(`job ${id} still ${res.body.data.status}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Checks a bulk insert result against its items: the failures where they were put, the rest in, numbers gap-free. */
async function expectBatchOutcome(
  result: any,
  sent: Record<string, unknown>[],
  failAt: number[],
  prefix: string,
): Promise<void> {
  expect(result.total).toBe(sent.length);
  expect(result.failure_count).toBe(failAt.length);
  expect(result.success_count + result.failure_count).toBe(result.total);
  expect(result.failed.map((f: any) => f.error)).toEqual(
    failAt.map((_, k) => ['ValidationError', 'DataError', 'DuplicateEntryError', 'ValidationError'][k % 4]),
  );
  // Every other item is in, in order, and the series numbers they took follow each other without a gap.
  const numbers = (result.inserted as string[]).map(seriesNumber);
  expect(numbers).toHaveLength(sent.length - failAt.length);
  for (let i = 1; i < numbers.length; i++) expect(numbers[i]).toBe((numbers[i - 1] as number) + 1);
  const titles = await stored();
  const expected = sent.filter((_, i) => !failAt.includes(i)).map((d) => d.title);
  expect(titles.filter((x) => x.startsWith(`${prefix} `) && !x.endsWith(' dup')).sort()).toEqual(
    [...expected].sort(),
  );
  // Nothing of a failed item was kept, not even a row its after-write hook refused.
  expect(titles.filter((x) => x.startsWith('fail:') || x === `${prefix} dup`)).toEqual([]);
  // The series counter stands at the last number taken: the rolled-back items took none.
  const year = new Date().getFullYear();
  const series = (await t.site.db.knex('tabSeries').where('name', `WID-${year}-`).first('current')) as {
    current: number | string;
  };
  expect(Number(series.current)).toBe(numbers[numbers.length - 1]);
}

test('a request batch: failing items in the middle roll back alone, the others commit, numbers stay gap-free', async () => {
  const first = await post('/api/v2/document/Named%20By%20Format', { title: 'existing' });
  expect(first.status).toBe(201);
  const failAt = [2, 5, 9, 13];
  const sent = items('req', 18, failAt, first.body.data.name);
  // The write transactions the request opens (each one COMMIT), grouped (a create's own) or not (a batch's).
  const transactions = jest.spyOn(t.site.db, 'transaction');
  const res = await post('/api/v2/document/Named%20By%20Format/bulk_insert', { docs: sent });
  const opened = transactions.mock.calls.map(([, grouped]) => grouped);
  transactions.mockRestore();
  expect(res.status).toBe(200);
  await expectBatchOutcome(res.body.data, sent, failAt, 'req');
  // On MariaDB and PostgreSQL the 14 items that went in were committed by one transaction (the batch), not one each.
  if (DB_KIND !== 'sqlite') expect(opened).toEqual([false]);
});

test('a queued job over several batches: failing items at batch edges roll back alone, each item one outcome', async () => {
  const failAt = [0, 49, 50, 64, 65, 99];
  const existing = await post('/api/v2/document/Named%20By%20Format', { title: 'existing 2' });
  const sent = items('job', 130, failAt, existing.body.data.name);
  const res = await post('/api/v2/document/Named%20By%20Format/bulk_insert', { docs: sent });
  expect(res.status).toBe(202);
  const job = await finished(res.body.data.job_id);
  expect(job.status).toBe('finished');
  await expectBatchOutcome(job.result, sent, failAt, 'job');
});

test('bulk_update and bulk_delete: a failing item in the middle of a batch rolls back alone', async () => {
  const made = await post('/api/v2/document/Named%20By%20Format/bulk_insert', {
    docs: Array.from({ length: 6 }, (_, i) => ({ title: `upd ${i}` })),
  });
  const names = made.body.data.inserted as string[];
  const upd = await post('/api/v2/document/Named%20By%20Format/bulk_update', {
    docs: names.map((name, i) => ({ name, title: i === 2 ? 'fail:on_update' : `upd ${i} changed` })),
  });
  expect(upd.body.data.updated).toEqual(names.filter((_, i) => i !== 2));
  expect(upd.body.data.failed.map((f: any) => [f.name, f.error])).toEqual([[names[2], 'ValidationError']]);
  const titles = await stored();
  expect(titles).toEqual(expect.arrayContaining(['upd 0 changed', 'upd 2', 'upd 5 changed']));
  expect(titles).not.toContain('fail:on_update');
  const del = await post('/api/v2/document/Named%20By%20Format/bulk_delete', {
    names: [names[0], 'no-such-doc', names[1]],
  });
  expect(del.body.data.deleted).toEqual([names[0], names[1]]);
  expect(del.body.data.failed.map((f: any) => f.error)).toEqual(['DoesNotExistError']);
  const left = await t.site.db.knex('tabNamed By Format').whereIn('name', names).pluck('name');
  expect(left.sort()).toEqual(names.slice(2).sort());
});

(DB_KIND !== 'sqlite' ? describe : describe.skip)('SavepointBatch (MariaDB, PostgreSQL)', () => {
  const table = 'bulk_batching_scratch';
  beforeAll(async () => {
    await t.site.db.knex.schema.dropTableIfExists(table);
    await t.site.db.knex.schema.createTable(table, (tb) => {
      tb.string('name', 40).primary();
    });
  });
  const rows = async () => (await t.site.db.knex(table).pluck('name')).sort();

  test('works commit together after close; a throwing work is rolled back alone and rejects at once', async () => {
    const batch = new SavepointBatch((work) => t.site.db.transaction(work, false), t.site.db.errors);
    let committed = false;
    const a = batch.run((q) => q(table).insert({ name: 'a' }));
    const b = batch.run(async (q) => {
      await q(table).insert({ name: 'b' });
      throw new Error('refused');
    });
    const c = batch.run((q) => q(table).insert({ name: 'c' }));
    void a.then(() => (committed = true));
    await expect(b).rejects.toThrow('refused');
    expect(committed).toBe(false);
    await batch.close();
    await Promise.all([a, c]);
    expect(await rows()).toEqual(['a', 'c']);
    // A work arriving after the commit runs in a transaction of its own.
    await batch.run((q) => q(table).insert({ name: 'd' }));
    expect(await rows()).toEqual(['a', 'c', 'd']);
  });

  test('a transaction the server ended under a work: released works reject as rolled back, later ones commit', async () => {
    await t.site.db.knex(table).delete();
    const batch = new SavepointBatch((work) => t.site.db.transaction(work, false), t.site.db.errors);
    const a = batch.run((q) => q(table).insert({ name: 'a' }));
    const b = batch.run(async (q) => {
      await q.raw('ROLLBACK');
      throw new Error('the transaction ended');
    });
    const c = batch.run((q) => q(table).insert({ name: 'c' }));
    const closed = batch.close();
    await expect(a).rejects.toBeInstanceOf(BatchRolledBackError);
    await expect(b).rejects.toThrow('the transaction ended');
    await c;
    await closed;
    expect(await rows()).toEqual(['c']);
  });

  test('a work that loses a deadlock ends the batch, where PostgreSQL undid only its statement: released works reject as rolled back, later ones commit', async () => {
    await t.site.db.knex(table).delete();
    await t.site.db.knex(table).insert([{ name: 'x' }, { name: 'y' }]);
    const batch = new SavepointBatch((work) => t.site.db.transaction(work, false), t.site.db.errors);
    const a = batch.run((q) => q(table).insert({ name: 'a' }));
    // Another transaction holds y and, once the work waits for y, asks for x: the work waited first (PostgreSQL's
    // check finds it first) and is the lighter transaction (InnoDB's choice), so it is the victim.
    const other = await t.site.db.knex.transaction();
    await other(table).insert(Array.from({ length: 50 }, (_, i) => ({ name: `heavy ${i}` })));
    await other(table).where({ name: 'y' }).forUpdate().select('name');
    let theirs: Promise<unknown> = Promise.resolve();
    const b = batch.run(async (q) => {
      await q(table).where({ name: 'x' }).forUpdate().select('name');
      const id = await connectionOf(q);
      const mine = q(table)
        .where({ name: 'y' })
        .forUpdate()
        .select('name')
        .then(() => undefined);
      await waitingForLock(t.site.db.knex, id);
      theirs = other(table)
        .where({ name: 'x' })
        .forUpdate()
        .select('name')
        .finally(() => other.rollback());
      await mine;
    });
    const c = batch.run((q) => q(table).insert({ name: 'c' }));
    const closed = batch.close();
    const lost = await b.then(
      () => undefined,
      (err: object) => err,
    );
    expect(lost && t.site.db.errors.isDeadlock(lost)).toBe(true);
    await expect(a).rejects.toBeInstanceOf(BatchRolledBackError);
    await c;
    await closed;
    await theirs;
    expect(await rows()).toEqual(['c', 'x', 'y']);
  });
});

(DB_KIND !== 'sqlite' ? test : test.skip)(
  'MariaDB, PostgreSQL: items of a batch the server rolled back as a whole are run again alone, once each',
  async () => {
    const original = SavepointBatch.prototype.run;
    let calls = 0;
    const spy = jest.spyOn(SavepointBatch.prototype, 'run').mockImplementation(function <T>(
      this: SavepointBatch,
      work: (q: import('knex').Knex) => Promise<T>,
    ): Promise<T> {
      calls++;
      // The fourth item's work finds its transaction ended by the server (as a deadlock does).
      const wrapped =
        calls === 4
          ? async (q: import('knex').Knex): Promise<T> => {
              await q.raw('ROLLBACK');
              throw new Error('transaction ended');
            }
          : work;
      return original.call(this, wrapped) as Promise<T>;
    });
    try {
      const res = await post('/api/v2/document/Named%20By%20Format/bulk_insert', {
        docs: Array.from({ length: 8 }, (_, i) => ({ title: `redo ${i}` })),
      });
      expect(res.status).toBe(200);
      const r = res.body.data;
      expect(r.inserted).toHaveLength(7);
      expect(r.failed.map((f: any) => f.error)).toEqual(['InternalServerError']);
      const titles = (await stored()).filter((x) => x.startsWith('redo '));
      expect(titles.sort()).toEqual(['redo 0', 'redo 1', 'redo 2', 'redo 4', 'redo 5', 'redo 6', 'redo 7']);
      const numbers = (r.inserted as string[]).map(seriesNumber).sort((a, b) => a - b);
      for (let i = 1; i < numbers.length; i++) expect(numbers[i]).toBe((numbers[i - 1] as number) + 1);
    } finally {
      spy.mockRestore();
    }
  },
);
