// Group commit on PostgreSQL: the works that queue while a lane is busy share its transaction, none settled before the
// COMMIT. A work that throws without having written fails alone and the batch goes on; one that throws after writing,
// or during which a statement failed (PostgreSQL aborts the whole transaction: a duplicate key), has its batch rolled
// back and each work of it run again alone, unless it was first in the batch; a COMMIT that answers ROLLBACK
// acknowledges nothing. One lane here, so which works share a batch does not depend on timing.
import type { Knex } from 'knex';
import pg from 'pg';
import { PostgresGroupCommit } from '../../runtime/db/postgres/group-commit';
import { DB_KIND, createTestSite, type TestSite } from '../helpers/test-site';

const onPostgres = DB_KIND === 'postgres' ? describe : describe.skip;

// How many queries each node-postgres connection had sent and not had answered at once, at most: node-postgres
// deprecates sending one while another runs (pg@9 refuses it). Counted from the start of the file, before any
// connection is opened or wrapped.
const inFlight = new Map<object, number>();
let mostInFlight = 0;
const originalQuery = pg.Client.prototype.query;
jest.spyOn(pg.Client.prototype, 'query').mockImplementation(function (this: pg.Client, ...args: unknown[]) {
  const running = (inFlight.get(this) ?? 0) + 1;
  inFlight.set(this, running);
  mostInFlight = Math.max(mostInFlight, running);
  const answered = () => inFlight.set(this, (inFlight.get(this) ?? 1) - 1);
  const last = args.length - 1;
  const callback = args[last];
  if (typeof callback === 'function') {
    args[last] = (...answer: unknown[]) => {
      answered();
      (callback as (...a: unknown[]) => void)(...answer);
    };
    return (originalQuery as (...a: unknown[]) => unknown).apply(this, args);
  }
  const result = (originalQuery as (...a: unknown[]) => unknown).apply(this, args);
  if (result instanceof Promise) result.then(answered, answered);
  else answered();
  return result;
} as typeof originalQuery);

onPostgres('PostgresGroupCommit', () => {
  const table = 'tabPgc Scratch';
  let t: TestSite;
  let group: PostgresGroupCommit;
  beforeAll(async () => {
    t = await createTestSite();
    await t.site.db.knex.schema.dropTableIfExists(table);
    await t.site.db.knex.schema.createTable(table, (tb) => tb.string('name', 40).primary());
  });
  afterAll(() => t?.close());
  beforeEach(async () => {
    await t.site.db.knex(table).delete();
    group = new PostgresGroupCommit(t.site.db.knex, 8000, 1);
  });

  /** A full row of a ToDo named `name`, as the row store writes one. */
  const todoRow = (name: string) => ({
    name,
    description: name,
    owner: 'Administrator',
    modified_by: 'Administrator',
    creation: '2026-11-28 00:00:00.000000',
    modified: '2026-11-28 00:00:00.000000',
    docstatus: 0,
    idx: 0,
  });
  /** The committed rows, as another connection sees them. */
  const committed = async () => (await t.site.db.knex(table).pluck('name')).sort();
  const insert = (name: string) => (q: Knex) => q(table).insert({ name });
  /** A work that counts its runs in `runs` under `name`, then does `then`. */
  const counted =
    (runs: Record<string, number>, name: string, then: (q: Knex) => Promise<unknown>) => (q: Knex) => {
      runs[name] = (runs[name] ?? 0) + 1;
      return then(q);
    };

  test('works queued behind a running one share its transaction: each sees the ones before it, nothing is visible or settled before the COMMIT', async () => {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const settled: string[] = [];
    const seen: unknown[] = [];
    const a = group
      .run(async (q) => {
        await q(table).insert({ name: 'a' });
        await gate;
      })
      .then(() => settled.push('a'));
    const b = group
      .run(async (q) => {
        await q(table).insert({ name: 'b' });
        seen.push((await q(table).orderBy('name').pluck('name')) as string[], await committed());
      })
      .then(() => settled.push('b'));
    const c = group
      .run(async (q) => {
        await q(table).insert({ name: 'c' });
        seen.push([...settled]);
        return 'c done';
      })
      .then((result) => {
        settled.push('c');
        return result;
      });
    open();
    await Promise.all([a, b]);
    expect(await c).toBe('c done');
    expect(seen).toEqual([['a', 'b'], [], []]);
    expect(await committed()).toEqual(['a', 'b', 'c']);
    expect(group.commits).toBe(1);
  });

  test('a work that throws after writing: its batch is rolled back and each work runs again alone; the others commit, it fails again', async () => {
    const runs: Record<string, number> = {};
    const refuse = (name: string) => async (q: Knex) => {
      await q(table).insert({ name });
      throw new Error(`${name} refused`);
    };
    const works = [
      group.run(counted(runs, 'a', refuse('a'))),
      group.run(counted(runs, 'b', insert('b'))),
      group.run(counted(runs, 'c', refuse('c'))),
      group.run(counted(runs, 'd', insert('d'))),
    ];
    const outcomes = await Promise.allSettled(works);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'fulfilled', 'rejected', 'fulfilled']);
    expect(String((outcomes[0] as PromiseRejectedResult).reason)).toContain('a refused');
    expect(String((outcomes[2] as PromiseRejectedResult).reason)).toContain('c refused');
    expect(await committed()).toEqual(['b', 'd']);
    // a was first in its transaction (its failure is its own); b shared c's batch and ran again alone, as did c.
    expect(runs).toEqual({ a: 1, b: 2, c: 2, d: 1 });
    expect(group.reruns).toBe(2);
  });

  test('a duplicate key aborts the batch: its works run again alone and only the duplicate fails (23505); a work that fails before writing fails alone', async () => {
    const runs: Record<string, number> = {};
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const a = group.run(
      counted(runs, 'a', async (q) => {
        await q(table).insert({ name: 'a' });
        await gate;
      }),
    );
    const duplicate = group.run(counted(runs, 'dup', insert('a')));
    const refused = group.run(
      counted(runs, 'refused', async (q) => {
        await q(table).where({ name: 'a' }).first();
        throw new Error('refused before writing');
      }),
    );
    const d = group.run(counted(runs, 'd', insert('d')));
    open();
    const outcomes = await Promise.allSettled([a, duplicate, refused, d]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason).toMatchObject({ code: '23505' });
    expect(String((outcomes[2] as PromiseRejectedResult).reason)).toContain('refused before writing');
    expect(await committed()).toEqual(['a', 'd']);
    expect(runs).toEqual({ a: 2, dup: 2, refused: 1, d: 1 });
    expect(group.reruns).toBe(2);
  });

  test('a work that swallows its own failed statement: the COMMIT answers ROLLBACK and the work is not acknowledged', async () => {
    const swallows = async (q: Knex) => {
      await q(table).insert({ name: 'x' });
      await q(table)
        .insert({ name: 'x' })
        .catch(() => undefined);
      return 'said ok';
    };
    await expect(group.run(swallows)).rejects.toThrow(/rolled back at COMMIT/);
    expect(await committed()).toEqual([]);
    // The lane goes on: the next batch commits.
    await Promise.all([group.run(insert('c')), group.run(insert('d'))]);
    expect(await committed()).toEqual(['c', 'd']);
  });

  test('a work that ends the transaction under the batch: the works before it run again alone and commit, whether it throws or not', async () => {
    const endsIt = (fail: boolean) => async (q: Knex) => {
      await q(table).insert({ name: fail ? 'b' : 'e' });
      await q.raw('ROLLBACK');
      if (fail) throw new Error('the transaction ended');
    };
    const a = group.run(insert('a'));
    const b = group.run(endsIt(true));
    const c = group.run(insert('c'));
    await a;
    await expect(b).rejects.toThrow('the transaction ended');
    await c;
    expect(await committed()).toEqual(['a', 'c']);
    const d = group.run(insert('d'));
    const e = group.run(endsIt(false));
    await Promise.all([d, e]);
    expect(await committed()).toEqual(['a', 'c', 'd']);
  });

  test('concurrent creates through the API (several lanes): every acknowledged name is stored once', async () => {
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        t.http
          .post('/api/resource/ToDo')
          .set('Authorization', t.adminToken)
          .send({ description: `group commit ${i}` }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(40).fill(201));
    const names = answers.map((a) => a.body.data.name as string).sort();
    const stored = (
      (await t.site.db
        .knex('tabToDo')
        .where('description', 'like', 'group commit %')
        .pluck('name')) as string[]
    ).sort();
    expect(stored).toEqual(names);
  });

  // A batch holds the row store's inserts back and sends them as one INSERT per table before its COMMIT (deferInsert):
  // two works inserting one name both succeed in the batch and fail that INSERT together; each then runs again alone.
  test("the row store's held rows: sent once before the COMMIT; one name twice fails the batch, each runs again alone", async () => {
    const binding = t.site.registry.get('ToDo')!;
    const stamp = Date.now();
    const runs: Record<string, number> = {};
    const names = ['one', 'twice', 'twice', 'two'].map((n) => `held ${stamp} ${n}`);
    const outcomes = await Promise.allSettled(
      names.map((name, i) =>
        group.run(counted(runs, String(i), (q) => t.site.rows.insert(q, binding, todoRow(name)))),
      ),
    );
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect((outcomes[2] as PromiseRejectedResult).reason).toMatchObject({ excType: 'DuplicateEntryError' });
    // The three works of the failed batch ran twice (the batch, then alone); a work queued after it may have run once.
    expect([runs[0], runs[1], runs[2]]).toEqual([2, 2, 2]);
    expect(group.reruns).toBeGreaterThanOrEqual(3);
    const stored = (await t.site.db
      .knex('tabToDo')
      .where('name', 'like', `held ${stamp} %`)
      .pluck('name')) as string[];
    expect(stored.sort()).toEqual([names[0], names[1], names[3]].sort());
  });

  // Held rows of two tables (a document and its event), then a read in the next work: the read waits for the held
  // INSERTs, which go one after another, and sees them; no connection ever has two queries out at once.
  test('held rows of several tables and the statement after them go out one at a time, and the statement sees them', async () => {
    const binding = t.site.registry.get('ToDo')!;
    const stamp = Date.now();
    const event = (name: string) => ({
      doctype: 'ToDo',
      docname: name,
      action: 'insert',
      modified: '2026-11-29 00:00:00.000000',
      user: 'Administrator',
      owner: 'Administrator',
      created_at: stamp,
    });
    mostInFlight = 0;
    const names = [1, 2, 3].map((n) => `serial ${stamp} ${n}`);
    const seen = await Promise.all(
      names.map((name) =>
        group.run(async (q) => {
          await t.site.rows.insert(q, binding, todoRow(name));
          await t.site.rows.insertEvent(q, event(name));
          // The read is sent after the held rows of this work and of the works before it in the batch.
          return (await q('tabToDo')
            .where('name', 'like', `serial ${stamp} %`)
            .orderBy('name')
            .pluck('name')) as string[];
        }),
      ),
    );
    expect(seen).toEqual([names.slice(0, 1), names.slice(0, 2), names]);
    expect(group.commits).toBe(1);
    const events = (await t.site.db
      .knex('__Event')
      .where('docname', 'like', `serial ${stamp} %`)
      .orderBy('id')
      .pluck('docname')) as string[];
    expect(events).toEqual(names);
    expect(mostInFlight).toBe(1);
  });
});
