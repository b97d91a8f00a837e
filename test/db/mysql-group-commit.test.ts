// Group commit on MariaDB: the works that queue while a lane is busy share its transaction, none settled before the
// COMMIT. A work that throws without having written fails alone and the batch goes on; one that throws after writing
// (or leaves the transaction's state unknown) has its batch rolled back and each work of it run again alone; a COMMIT
// that fails fails the works of its batch and no others. One lane here, so which works share a batch does not depend
// on timing.
import knexFactory, { type Knex } from 'knex';
import type { MysqlDatabase } from '../../runtime/db/mysql/backend';
import { MysqlGroupCommit, deferInsert } from '../../runtime/db/mysql/group-commit';
import { mysqlConnection, type MysqlConnection } from '../../runtime/db/mysql/statements';
import { CHANGE_SHARDS, CHANGE_TABLE } from '../../runtime/db/mysql/table-changes';
import { DB_KIND, createTestSite, type TestSite } from '../helpers/test-site';

const onMysql = DB_KIND === 'mysql' ? describe : describe.skip;

onMysql('MysqlGroupCommit', () => {
  const table = 'tabMgc Scratch';
  let t: TestSite;
  let group: MysqlGroupCommit;
  beforeAll(async () => {
    t = await createTestSite({ site: { db_busy_timeout: 300 } });
    await t.site.db.knex.schema.dropTableIfExists(table);
    await t.site.db.knex.schema.createTable(table, (tb) => tb.string('name', 40).primary());
    // Change versions for the scratch table, so that its writes' bumps have rows to lock.
    await t.site.db
      .knex(CHANGE_TABLE)
      .insert(Array.from({ length: CHANGE_SHARDS }, (_, shard) => ({ tab: table, shard, version: 0 })));
  });
  afterAll(() => t?.close());
  beforeEach(async () => {
    await t.site.db.knex(table).delete();
    const db = t.site.db as MysqlDatabase;
    group = new MysqlGroupCommit(db.writeKnex, db.statementMs, 1);
  });

  /** The committed rows, as another connection sees them. */
  const committed = async () => (await t.site.db.knex(table).pluck('name')).sort();
  const insert = (name: string) => (q: Knex) => q(table).insert({ name });

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
  });

  test('a work queued later in the same turn (another socket callback) joins the batch that ran out of works: the batch waits for the check phase before its COMMIT', async () => {
    const head = `insert into \`${table}\` (\`name\`) values `;
    let b: Promise<unknown> | undefined;
    const seen: unknown[] = [];
    const a = group.run(async (q) => {
      // Queued in this turn's check phase, after this work has run and the queue is empty (no statement in between:
      // the row is held back).
      setImmediate(() => {
        b = group.run(async (q2) => {
          seen.push((await q2(table).pluck('name')) as string[], await committed());
        });
      });
      const conn = (await mysqlConnection(q)) as MysqlConnection;
      if (!deferInsert(conn, head, '(?)', ['a'])) throw new Error('a batch holds its inserts back');
    });
    await a;
    await b;
    // In a's transaction: b sees a's row, which no other connection saw before the COMMIT.
    expect(seen).toEqual([['a'], []]);
    expect(await committed()).toEqual(['a']);
  });

  /** A work that counts its runs in `runs` under `name`, then does `then`. */
  const counted =
    (runs: Record<string, number>, name: string, then: (q: Knex) => Promise<unknown>) => (q: Knex) => {
      runs[name] = (runs[name] ?? 0) + 1;
      return then(q);
    };

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
    // a was alone in its transaction (its failure is its own); b shared c's batch and ran again alone, as did c.
    expect(runs).toEqual({ a: 1, b: 2, c: 2, d: 1 });
    expect(group.reruns).toBe(2);
  });

  test('a work that fails without writing (an error before any statement, a duplicate key) fails alone: the batch goes on, nothing runs again', async () => {
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
    expect((outcomes[1] as PromiseRejectedResult).reason).toMatchObject({ errno: 1062 });
    expect(String((outcomes[2] as PromiseRejectedResult).reason)).toContain('refused before writing');
    expect(await committed()).toEqual(['a', 'd']);
    expect(runs).toEqual({ a: 1, dup: 1, refused: 1, d: 1 });
    expect(group.reruns).toBe(0);
  });

  test('a work first in its batch whose held row fails when its own next statement sends it (a name committed meanwhile): it runs again alone and fails as alone, not acknowledged', async () => {
    const runs: Record<string, number> = {};
    // Committed by another writer after the work's checks, before its held row is sent.
    await t.site.db.knex(table).insert({ name: 'taken' });
    const head = `insert into \`${table}\` (\`name\`) values `;
    const held = counted(runs, 'held', async (q) => {
      const conn = (await mysqlConnection(q)) as MysqlConnection;
      if (!deferInsert(conn, head, '(?)', ['taken'])) await q(table).insert({ name: 'taken' });
      // This read sends the held row first; its failure does not reach the work.
      await q(table).where({ name: 'b' }).first();
      return 'stored';
    });
    const first = group.run(held);
    const b = group.run(counted(runs, 'b', insert('b')));
    const outcomes = await Promise.allSettled([first, b]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'fulfilled']);
    expect((outcomes[0] as PromiseRejectedResult).reason).toMatchObject({ errno: 1062 });
    expect(await committed()).toEqual(['b', 'taken']);
    expect(runs.held).toBe(2);
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
    // Without throwing: before, the COMMIT after it kept nothing of the works released before it.
    const d = group.run(insert('d'));
    const e = group.run(endsIt(false));
    await Promise.all([d, e]);
    expect(await committed()).toEqual(['a', 'c', 'd']);
  });

  test('a COMMIT that fails (its change bump waits past db_busy_timeout) rejects every work of the batch and keeps none', async () => {
    const other: Knex = knexFactory({ client: 'mysql2', connection: t.site.config.databaseUrl as string });
    const trx = await other.transaction();
    try {
      await trx(CHANGE_TABLE).where({ tab: table }).forUpdate().select('shard');
      const outcomes = await Promise.allSettled([group.run(insert('a')), group.run(insert('b'))]);
      expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected']);
    } finally {
      await trx.rollback();
      await other.destroy();
    }
    expect(await committed()).toEqual([]);
    // The lane goes on with a connection of its own: the next batch commits.
    await Promise.all([group.run(insert('c')), group.run(insert('d'))]);
    expect(await committed()).toEqual(['c', 'd']);
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
});
